// The schema-independent part of externspec's C++ decoder, a header per question under wire/: the
// limits and errors (errors.h), the value types (containers.h), the issue collector that builds JSON
// paths (issues.h), the wire rules of maps, unions and scalars (rules.h) and the JSON writer
// (json_writer.h). The generated code in externspec.h is written against these helpers; JSON
// backends (backend_*.h) provide a `Value`. Include this header, not its parts.
#pragma once

// The standard headers the generated code uses.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "wire/errors.h"
#include "wire/containers.h"
#include "wire/issues.h"
#include "wire/rules.h"
#include "wire/json_writer.h"
