/** Maps have string keys on the JSON wire. */
struct Table {
  10: map<string, list<i64>> columns;
  20: map<string, map<string, double>> nested;
}
