// Triton's data types (the wire enum and the config's `TYPE_*` names) and torch's scalar types: one
// table, read both ways.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

#include "triton_api.h"

namespace externspec::triton {

// The config's name of a torch dtype (`TYPE_FP32`); nullopt for a dtype Triton has no name for.
std::optional<std::string> config_type(c10::ScalarType dtype);
// The torch dtype of a config name; nullopt for an unknown name or one torch cannot hold (TYPE_STRING).
std::optional<c10::ScalarType> from_config_type(const std::string& name);
TRITONSERVER_DataType wire_type(c10::ScalarType dtype);
std::optional<c10::ScalarType> from_wire_type(TRITONSERVER_DataType type);
// What a request names (`FP32`, Triton's own spelling): the config name without `TYPE_`.
std::string wire_name(TRITONSERVER_DataType type);

}  // namespace externspec::triton
