// Apache Thrift's Node.js library (npm `thrift`) reads each document and writes it back.
// Usage: node roundtrip.js GENERATED_TYPES_JS JOBS; JOBS has one line per document:
// TYPE<TAB>PROTOCOL<TAB>INPUT<TAB>OUTPUT, PROTOCOL `binary` or `compact`.
"use strict";
const fs = require("fs");
const thrift = require("thrift");

const types = require(process.argv[2]);
// The generated methods: read/write up to compiler 0.17 (Debian's), Symbol.for("read"/"write") in
// later ones (0.24 generates those).
const READ = Symbol.for("read"), WRITE = Symbol.for("write");
const method = (doc, name, symbol) => (doc[name] ?? doc[symbol]).bind(doc);
const PROTOCOLS = { binary: thrift.TBinaryProtocol, compact: thrift.TCompactProtocol };

for (const line of fs.readFileSync(process.argv[3], "utf8").split("\n")) {
  if (!line) continue;
  const [typeName, protocolName, input, output] = line.split("\t");
  const Type = types[typeName];
  const Protocol = PROTOCOLS[protocolName];
  if (Type === undefined || Protocol === undefined) {
    throw new Error(`unknown type or protocol in job: ${line}`);
  }
  const doc = new Type();
  method(doc, "read", READ)(new Protocol(new thrift.TFramedTransport(fs.readFileSync(input))));
  let written = null;
  const out = new thrift.TBufferedTransport(null, (bytes) => { written = bytes; });
  method(doc, "write", WRITE)(new Protocol(out));
  out.flush();
  fs.writeFileSync(output, written);
}
