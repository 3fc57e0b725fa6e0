/**
 * externspec: the versioned contract between ahead-of-time compiled PyTorch code and the extern
 * kernels it calls through a proxy executor.
 *
 * This file is the single source of truth. `make generate` turns it into the pydantic models
 * (python/externspec/_generated/) and the C++ header (python/externspec/include/externspec/).
 *
 * Wire format (JSON, identical to torch 2.13's export serde):
 *   struct   -> object keyed by field name, every field written in declaration order;
 *   union    -> object with exactly one key, the member name;
 *   enum     -> its integer value;
 *   optional -> null when unset, and a missing key reads as unset;
 *   double   -> number, with inf/-inf/nan written as "Infinity"/"-Infinity"/"NaN".
 *
 * Field names are torch's JSON keys and must never change. Field ids are identity for the
 * compatibility checker and for Thrift's binary protocols: never change or reuse one. Ids are
 * spaced by ten so that later fields fit between. Every type mirrors the structure of the same name
 * in torch/_export/serde/schema.py (SCHEMA_VERSION 8.20), unless its doc says otherwise.
 */

namespace py externspec
namespace cpp externspec

/** Version of this schema. Major: breaking change; minor: compatible addition (see docs/versioning.md). */
struct SchemaVersion {
  10: i64 major;
  20: i64 minor;
}

/**
 * The version of externspec's own documents (ExternKernelNodes). Readers accept the same major
 * and any minor; a newer minor is read only when it carries nothing this reader does not know.
 */
const SchemaVersion SCHEMA_VERSION = {"major": 1, "minor": 2}

/**
 * The torch.export schema major that ExportedProgram mirrors. An ExportedProgram's own
 * `schema_version` is torch's (8.20 in torch 2.13) and is checked against this major.
 */
const i64 TORCH_EXPORT_SCHEMA_MAJOR = 8

// ---------------------------------------------------------------------------------------------
// Enums. ScalarType, Layout and MemoryFormat use the serialization numbering of torch's export
// schema, not c10's: convert through the name tables, never by value.
// ---------------------------------------------------------------------------------------------

/**
 * How the nodes of an extern-kernel file sit in the two flat arrays of their calls, which torch
 * changed without a version (docs/torch-compat.md, "The rule"). The wrappers of torch 2.11 to 2.14
 * pass the defaults of the kwarg-only arguments a node omits in the int array; torch 2.15's wrapper
 * and externspec's exporter pass exactly the arguments the node names.
 */
enum CallLayout {
  /** Each call's arrays hold the node's own arguments and nothing else (torch 2.15, externspec). */
  NODE_ARGUMENTS = 1,
  /**
   * The arrays also hold the op schema's default of every kwarg-only argument the node omits,
   * with the slots it takes written as a value (torch 2.11 to 2.14).
   */
  OMITTED_DEFAULTS_PASSED = 2,
}

/** How an argument was bound at the call site. Informational: executors match by name. */
enum ArgumentKind {
  UNKNOWN = 0,
  POSITIONAL = 1,
  KEYWORD = 2,
}

/** Tensor layout, in torch's serialization numbering (c10::Layout differs). */
enum Layout {
  Unknown = 0,
  SparseCoo = 1,
  SparseCsr = 2,
  SparseCsc = 3,
  SparseBsr = 4,
  SparseBsc = 5,
  _mkldnn = 6,
  Strided = 7,
}

/** Memory format, in torch's serialization numbering (c10::MemoryFormat differs). */
enum MemoryFormat {
  Unknown = 0,
  ContiguousFormat = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3,
  PreserveFormat = 4,
}

/**
 * Element type, in torch's serialization numbering: LONG is 5 here but 4 in c10::ScalarType.
 * The gap 14..27 is unused on purpose (torch never assigned it).
 */
enum ScalarType {
  UNKNOWN = 0,
  BYTE = 1,
  CHAR = 2,
  SHORT = 3,
  INT = 4,
  LONG = 5,
  HALF = 6,
  FLOAT = 7,
  DOUBLE = 8,
  COMPLEXHALF = 9,
  COMPLEXFLOAT = 10,
  COMPLEXDOUBLE = 11,
  BOOL = 12,
  BFLOAT16 = 13,
  UINT16 = 28,
  FLOAT8E4M3FN = 29,
  FLOAT8E5M2 = 30,
  FLOAT8E4M3FNUZ = 31,
  FLOAT8E5M2FNUZ = 32,
  FLOAT8E8M0FNU = 33,
  UINT32 = 34,
  UINT64 = 35,
}

// ---------------------------------------------------------------------------------------------
// Values and symbolic values
// ---------------------------------------------------------------------------------------------

/** A device such as cpu or cuda:1. */
struct Device {
  /** Device type name as torch spells it: "cpu", "cuda", "meta", ... */
  10: string type;
  /** Device index; null means the current device of that type. */
  20: optional i64 index;
}

/** A concrete value that a symbolic expression took while tracing. */
union SymExprHint {
  10: i64 as_int;
  20: bool as_bool;
  30: double as_float;
}

/** A sympy expression over the program's symbols, with an optional traced hint. */
struct SymExpr {
  /** The expression as sympy prints it, e.g. "s0 + 8". */
  10: string expr_str;
  20: optional SymExprHint hint;
}

/** A symbolic or concrete integer (tensor sizes, strides, offsets). */
union SymInt {
  10: SymExpr as_expr;
  20: i64 as_int;
}

/** A symbolic or concrete float. */
union SymFloat {
  10: SymExpr as_expr;
  20: double as_float;
}

/** A symbolic or concrete bool. */
union SymBool {
  10: SymExpr as_expr;
  20: bool as_bool;
}

/** Static metadata of a tensor value in a graph. */
struct TensorMeta {
  10: ScalarType dtype;
  20: list<SymInt> sizes;
  30: bool requires_grad;
  40: Device device;
  50: list<SymInt> strides;
  60: SymInt storage_offset;
  70: Layout layout;
}

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

/**
 * A SymInt argument. In an extern-kernel file `as_name` holds the expression the compiled code
 * evaluates (e.g. "s77 + 8"); the value itself always arrives in the int array.
 */
union SymIntArgument {
  10: string as_name;
  20: i64 as_int;
}

/** A SymFloat argument: a graph value name or a constant. */
union SymFloatArgument {
  10: string as_name;
  20: double as_float;
}

/** A SymBool argument: a graph value name or a constant. */
union SymBoolArgument {
  10: string as_name;
  20: bool as_bool;
}

/** A tensor, by name: a graph value (torch.export) or an Inductor buffer (extern kernels). */
struct TensorArgument {
  10: string name;
}

/** An effect token threaded through side-effecting ops. */
struct TokenArgument {
  10: string name;
}

/**
 * A `Tensor?`: a tensor or None. Declared tensor-first, as in torch, so the C++ tag order matches
 * torch's generated header.
 */
union OptionalTensorArgument {
  20: TensorArgument as_tensor;
  10: bool as_none;
}

/** A script (torchbind) object, by constant name and class. */
struct CustomObjArgument {
  /** Name of the constant, e.g. "_torchbind_obj0"; the executor binds the object by this name. */
  10: string name;
  /** Fully qualified class name, e.g. "__torch__.torch.classes.ns.Foo". */
  20: string class_fqn;
}

/** A complex number. */
struct ComplexValue {
  10: double real;
  20: double imag;
}

// Graph, GraphArgument, Argument: Apache Thrift's C++ generator defines types in declaration order and
// holds a struct field by value, so a type held by value comes first; Graph holds Argument and Node
// in lists, which may be declared later.

/** A graph of nodes with the metadata of its values. */
struct Graph {
  10: list<Argument> inputs;
  20: list<Argument> outputs;
  30: list<Node> nodes;
  40: map<string, TensorMeta> tensor_values;
  50: map<string, SymInt> sym_int_values;
  60: map<string, SymBool> sym_bool_values;
  70: bool is_single_tensor_return = false;
  80: map<string, CustomObjArgument> custom_obj_values = {};
  90: map<string, SymFloat> sym_float_values = {};
}

/** A subgraph argument of a higher-order op. Recursive: the graph holds nodes with arguments. */
struct GraphArgument {
  10: string name;
  20: Graph graph;
}

/**
 * One argument or return value of a node. Exactly one member is set. Member ids follow torch's
 * schema and are not monotonic in declaration order (as_graph, 200, precedes as_optional_tensors,
 * 190); declaration order is the C++ tag order.
 *
 * In an extern-kernel file, which members carry values in the flat int/tensor arrays is decided
 * by the op schema, not by the member: see docs/call-abi.md.
 */
union Argument {
  /** None. The value is always true and never read. */
  10: bool as_none;
  20: TensorArgument as_tensor;
  30: list<TensorArgument> as_tensors;
  50: i64 as_int;
  70: list<i64> as_ints;
  80: double as_float;
  90: list<double> as_floats;
  100: string as_string;
  101: list<string> as_strings;
  110: SymIntArgument as_sym_int;
  120: list<SymIntArgument> as_sym_ints;
  130: ScalarType as_scalar_type;
  140: MemoryFormat as_memory_format;
  150: Layout as_layout;
  160: Device as_device;
  170: bool as_bool;
  180: list<bool> as_bools;
  182: SymBoolArgument as_sym_bool;
  184: list<SymBoolArgument> as_sym_bools;
  200: GraphArgument as_graph;
  /** A `Tensor?[]` input: None entries take no slot in the tensor array. */
  190: list<OptionalTensorArgument> as_optional_tensors;
  210: CustomObjArgument as_custom_obj;
  /** An operator, by Python path, e.g. "torch.ops.aten.add.Tensor" (torch.export only). */
  220: string as_operator;
  230: SymFloatArgument as_sym_float;
  240: list<SymFloatArgument> as_sym_floats;
  /** A `Tensor?` return value (inputs of type `Tensor?` use as_tensor or as_none). */
  250: OptionalTensorArgument as_optional_tensor;
  260: ComplexValue as_complex;
  270: list<list<TensorArgument>> as_nested_tensors;
  280: list<list<i64>> as_int_lists;
  290: map<string, Argument> as_string_to_argument;
  300: list<list<double>> as_float_lists;
}

/** An input of a node, named by the op schema's argument name. */
struct NamedArgument {
  /** The op schema's argument name; executors match inputs to the schema by this name. */
  10: string name;
  20: Argument arg;
  30: optional ArgumentKind kind;
}

/** One operator call. */
struct Node {
  /**
   * The operator. Extern-kernel files use the c10 name "ns::op" or "ns::op.overload" (or
   * "call_torchbind"); torch.export uses the Python path "torch.ops.ns.op.overload".
   */
  10: string target;
  /** Inputs in op-schema order. */
  20: list<NamedArgument> inputs;
  /** One entry per schema return. */
  30: list<Argument> outputs;
  /** Free-form metadata; "torch_library_custom_op": "1" marks a torch.library.custom_op op. */
  40: map<string, string> metadata;
  50: optional bool is_hop_single_tensor_return;
  60: optional string name;
}

// ---------------------------------------------------------------------------------------------
// Graph signature: what each graph input and output means to the program
// ---------------------------------------------------------------------------------------------

/** A graph input supplied by the user. */
struct UserInputSpec {
  10: Argument arg;
}

/** A constant bound to a graph input. */
union ConstantValue {
  10: bool as_none;
  20: i64 as_int;
  30: double as_float;
  40: string as_string;
  50: bool as_bool;
}

/** A graph input bound to a constant value. */
struct InputToConstantInputSpec {
  10: string name;
  20: ConstantValue value;
}

/** A graph input bound to a parameter. */
struct InputToParameterSpec {
  10: TensorArgument arg;
  20: string parameter_name;
}

/** A graph input bound to a buffer. */
struct InputToBufferSpec {
  10: TensorArgument arg;
  20: string buffer_name;
  30: bool persistent;
}

/** A graph input bound to a lifted tensor constant. */
struct InputToTensorConstantSpec {
  10: TensorArgument arg;
  20: string tensor_constant_name;
}

/** A graph input bound to a script object. */
struct InputToCustomObjSpec {
  10: CustomObjArgument arg;
  20: string custom_obj_name;
}

/** An input effect token. */
struct InputTokenSpec {
  10: TokenArgument arg;
}

/** The meaning of one graph input. */
union InputSpec {
  10: UserInputSpec user_input;
  20: InputToParameterSpec parameter;
  30: InputToBufferSpec buffer;
  40: InputToTensorConstantSpec tensor_constant;
  50: InputToCustomObjSpec custom_obj;
  70: InputTokenSpec token;
  60: InputToConstantInputSpec constant_input;
}

/** A graph output returned to the user. */
struct UserOutputSpec {
  10: Argument arg;
}

/** A graph output that is the loss. */
struct LossOutputSpec {
  10: TensorArgument arg;
}

/** A graph output that is the new value of a mutated buffer. */
struct BufferMutationSpec {
  10: TensorArgument arg;
  20: string buffer_name;
}

/** A graph output that is the new value of a mutated parameter. */
struct ParameterMutationSpec {
  10: TensorArgument arg;
  20: string parameter_name;
}

/** A graph output that is the gradient of a parameter. */
struct GradientToParameterSpec {
  10: TensorArgument arg;
  20: string parameter_name;
}

/** A graph output that is the gradient of a user input. */
struct GradientToUserInputSpec {
  10: TensorArgument arg;
  20: string user_input_name;
}

/** A graph output that is the new value of a mutated user input. */
struct UserInputMutationSpec {
  10: TensorArgument arg;
  20: string user_input_name;
}

/** An output effect token. */
struct OutputTokenSpec {
  10: TokenArgument arg;
}

/** The meaning of one graph output. */
union OutputSpec {
  10: UserOutputSpec user_output;
  20: LossOutputSpec loss_output;
  30: BufferMutationSpec buffer_mutation;
  40: GradientToParameterSpec gradient_to_parameter;
  50: GradientToUserInputSpec gradient_to_user_input;
  60: UserInputMutationSpec user_input_mutation;
  70: OutputTokenSpec token;
  80: ParameterMutationSpec parameter_mutation;
}

/** The meaning of every graph input and output. */
struct GraphSignature {
  10: list<InputSpec> input_specs;
  20: list<OutputSpec> output_specs;
}

// ---------------------------------------------------------------------------------------------
// Exported program
// ---------------------------------------------------------------------------------------------

/** The range of a symbol; null bounds are unbounded (torch writes +-inf as null). */
struct RangeConstraint {
  10: optional i64 min_val;
  20: optional i64 max_val;
}

/** The calling convention of a submodule, as pytree specs. */
struct ModuleCallSignature {
  10: list<Argument> inputs;
  20: list<Argument> outputs;
  /** Serialized pytree spec of the inputs. */
  30: string in_spec;
  /** Serialized pytree spec of the outputs. */
  40: string out_spec;
  50: optional list<string> forward_arg_names;
}

/** One submodule of the original module hierarchy. */
struct ModuleCallEntry {
  /** Fully qualified submodule name; "" for the root. */
  10: string fqn;
  30: optional ModuleCallSignature signature;
}

/** The field names of a namedtuple type used in a pytree spec. */
struct NamedTupleDef {
  10: list<string> field_names;
}

/** A graph with its signature and module hierarchy. */
struct GraphModule {
  10: Graph graph;
  50: GraphSignature signature;
  60: list<ModuleCallEntry> module_call_graph;
  40: map<string, string> metadata = {};
  70: map<string, NamedTupleDef> treespec_namedtuple_fields = {};
}

/** torch.export's program: the models/model.json of a .pt2 archive. */
struct ExportedProgram {
  10: GraphModule graph_module;
  /** Operator set versions by namespace, e.g. {"aten": 10}. */
  20: map<string, i64> opset_version;
  30: map<string, RangeConstraint> range_constraints;
  /** torch's export schema version (8.20 in torch 2.13), checked against TORCH_EXPORT_SCHEMA_MAJOR. */
  60: SchemaVersion schema_version;
  70: list<string> verifiers = [];
  80: string torch_version = "<=2.4";
  90: list<string> guards_code = [];
} (version_policy = "torch_export")

/** Where one weight of a .pt2 archive is stored. */
struct PayloadMeta {
  10: string path_name;
  20: bool is_param;
  30: bool use_pickle;
  40: optional TensorMeta tensor_meta;
}

/** The weights and constants config of a .pt2 archive. */
struct PayloadConfig {
  10: map<string, PayloadMeta> config;
}

/** Metadata of a pickled AOTInductor model (torch's small ids kept). */
struct AOTInductorModelPickleData {
  1: string library_basename;
  2: list<string> input_names;
  3: list<string> output_names;
  4: optional i64 floating_point_input_dtype;
  5: optional i64 floating_point_output_dtype;
  6: optional bool aot_inductor_model_is_cpu;
}

// ---------------------------------------------------------------------------------------------
// Extern kernels: what AOTInductor's proxy executor runs
// ---------------------------------------------------------------------------------------------

/** One extern-kernel call site; node i of the file is the compiled code's extern call i. */
struct ExternKernelNode {
  /** The Inductor buffer name, e.g. "buf3". Informational: not a unique key. */
  10: string name;
  20: Node node;
}

/**
 * An extern-kernel file (AOTInductor's *.wrapper.json). torch writes no version; externspec
 * stamps `schema_version`, `call_layout` and `producer`, which torch's reader (2.13 to 2.15)
 * ignores. A file without `schema_version` is torch-written and is read under schema 1.0.
 */
struct ExternKernelNodes {
  10: list<ExternKernelNode> nodes;
  /** externspec's schema version; omitted from the JSON when unset, as torch writes it. */
  20: optional SchemaVersion schema_version (json.omit_if_null = "true");
  /**
   * The call layout of every node (schema 1.2). Unset in a torch-written file, which says nothing
   * of it; externspec's exporter and `externspec upgrade` write it. Omitted when unset.
   */
  30: optional CallLayout call_layout (json.omit_if_null = "true");
  /**
   * What wrote the file (schema 1.2): "externspec X.Y.Z (torch A.B.C)" for externspec's exporter
   * and the torch it ran under, or what `externspec upgrade` recorded of a torch-written file.
   * Informational; omitted when unset.
   */
  40: optional string producer (json.omit_if_null = "true");
} (version_policy = "externspec")

// ---------------------------------------------------------------------------------------------
// The extern-kernel call ABI (docs/call-abi.md), as data. The exporter, both executors and
// `inspect` read these tables from the generated code; codegen checks that every member named by a
// const whose type is annotated `(members_of = "Argument")` is an Argument member (the annotation
// goes on the type: Apache Thrift's grammar has none after a const's value). A type spelling is the op
// schema's (`int[]`, `Tensor?[]`), without the outer `?` of an optional argument: that one also
// accepts `as_none`.
// ---------------------------------------------------------------------------------------------

/**
 * The op-schema base type of each torch JIT type kind (c10::TypeKind's names). A kind not listed
 * keeps torch's spelling of the type, which no table below accepts.
 */
const map<string, string> ABI_BASE_OF_TYPE_KIND = {
  "TensorType": "Tensor", "IntType": "int", "SymIntType": "SymInt", "FloatType": "float",
  "BoolType": "bool", "StringType": "str", "NumberType": "Scalar", "ScalarTypeType": "ScalarType",
  "LayoutType": "Layout", "MemoryFormatType": "MemoryFormat", "DeviceObjType": "Device",
  "NoneType": "NoneType",
}

/**
 * The Argument members a non-None input of each op-schema type may be written as; a type not
 * listed cannot be passed to an extern kernel. The enum types also accept `as_int`: torch 2.13
 * writes an enum default it filled in as an int in c10's numbering (static, converted through the
 * c10 name tables).
 */
const map<string, list<string>> (members_of = "Argument") ABI_INPUT_MEMBERS = {
  "Tensor": ["as_tensor"],
  "Tensor[]": ["as_tensors"],
  "Tensor?[]": ["as_optional_tensors", "as_tensors"],
  "int": ["as_int"],
  "int[]": ["as_ints"],
  "SymInt": ["as_int", "as_sym_int"],
  "SymInt[]": ["as_ints", "as_sym_ints"],
  "float": ["as_float"],
  "float[]": ["as_floats"],
  "bool": ["as_bool"],
  "bool[]": ["as_bools"],
  "str": ["as_string"],
  "str[]": ["as_strings"],
  "Scalar": ["as_int", "as_sym_int", "as_float", "as_bool", "as_complex"],
  "Scalar[]": ["as_ints", "as_sym_ints", "as_floats", "as_bools"],
  "ScalarType": ["as_scalar_type", "as_int"],
  "Layout": ["as_layout", "as_int"],
  "MemoryFormat": ["as_memory_format", "as_int"],
  "Device": ["as_device"],
}

/** The op-schema types whose `as_int` is a c10-numbered enum value: static, never a slot. */
const list<string> ABI_ENUM_TYPES = ["ScalarType", "Layout", "MemoryFormat"]

/**
 * The output member of each return type the ABI can return (the full spelling, outer `?`
 * included); a return type not listed cannot be returned through the arrays.
 */
const map<string, string> (members_of = "Argument") ABI_RETURN_MEMBERS = {
  "Tensor": "as_tensor",
  "Tensor[]": "as_tensors",
  "Tensor?": "as_optional_tensor",
  "int": "as_int",
  "SymInt": "as_int",
  "NoneType": "as_none",
}

/**
 * Members whose values travel in the int array, one slot per int (an enum type's `as_int`
 * excepted); inputs first, then int returns.
 */
const list<string> (members_of = "Argument") ABI_INT_SLOT_MEMBERS = ["as_int", "as_sym_int", "as_ints", "as_sym_ints"]

/**
 * Members whose values travel in the tensor array, one handle per tensor present (an absent
 * element of `as_optional_tensors` takes none); inputs first, then one handle per output tensor.
 * Every other member is static: decoded once at load.
 */
const list<string> (members_of = "Argument") ABI_TENSOR_SLOT_MEMBERS = ["as_tensor", "as_tensors", "as_optional_tensors"]

/** Node metadata key: the op schema the node was exported against (`str(op._schema)`). */
const string METADATA_OP_SCHEMA = "externspec.op_schema"

/** Node metadata key torch itself writes ("1") on a node whose op is a torch.library.custom_op. */
const string METADATA_TORCH_CUSTOM_OP = "torch_library_custom_op"

/**
 * Node metadata key: the comma-separated names of `Tensor` arguments that were Python numbers at
 * export (0-dim tensors in the arrays, rewrapped so type promotion treats them as numbers).
 */
const string METADATA_WRAPPED_NUMBERS = "externspec.wrapped_numbers"
