// execute (model_state.h): requests in, one run per batch of requests whose shapes merge, responses out.
#include <ATen/ATen.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "datatypes.h"
#include "extern_calls.h"
#include "model_state.h"
#include "triton_errors.h"

namespace externspec::triton {
namespace {

std::uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One request, its inputs read into tensors (in the package's input order) and its batch size.
struct Pending {
  TRITONBACKEND_Request* request;
  std::vector<at::Tensor> inputs;
  std::int64_t batch = 1;
  std::string error;  // why it cannot run ("" when it can)
};

// What a client reads of an error: the message without torch's backtrace, the server's folder of the
// model replaced by the model's name (`lite/1/model.pt2!...`, not `/srv/models/lite/1/...`); the log
// keeps the whole text (issue 54 item 6).
std::string client_text(const ModelState& model, const std::exception& error) {
  log(TRITONSERVER_LOG_VERBOSE, "externspec: model `" + model.name + "`: " + error.what());
  std::string text = without_backtrace(error);
  if (!model.dir.empty())
    for (std::size_t at = text.find(model.dir); at != std::string::npos; at = text.find(model.dir, at + model.name.size()))
      text.replace(at, model.dir.size(), model.name);
  return "model `" + model.name + "`: " + text;
}

std::string shape_text(const int64_t* shape, std::uint32_t rank) {
  std::string text = "[";
  for (std::uint32_t d = 0; d < rank; ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

// Copies the request's buffers of one input into a tensor, after checking its data type and shape
// against the config (the server checks them too; this holds whatever the server lets through).
at::Tensor read_input(TRITONBACKEND_Input* input, const ConfigTensor& expected, bool batched) {
  const char* name = nullptr;
  TRITONSERVER_DataType type;
  const int64_t* shape = nullptr;
  std::uint32_t rank = 0, buffers = 0;
  std::uint64_t bytes = 0;
  check(TRITONBACKEND_InputProperties(input, &name, &type, &shape, &rank, &bytes, &buffers), expected.name.c_str());
  std::string where = "input `" + expected.name + "`";
  if (from_wire_type(type) != expected.dtype)
    throw std::invalid_argument(where + ": data type " + wire_name(type) + ", the model takes " +
                                wire_name(wire_type(expected.dtype)));
  bool agree = rank == expected.dims.size() + (batched ? 1 : 0);
  for (std::uint32_t d = batched ? 1 : 0; agree && d < rank; ++d) {
    std::int64_t want = expected.dims[d - (batched ? 1 : 0)];
    agree = want == -1 || want == shape[d];
  }
  if (!agree) throw std::invalid_argument(where + ": shape " + shape_text(shape, rank) + " does not match the model's dims");
  at::Tensor tensor = at::empty(std::vector<std::int64_t>(shape, shape + rank), at::TensorOptions().dtype(expected.dtype));
  std::uint64_t want_bytes = tensor.numel() * tensor.element_size(), copied = 0;
  if (bytes != want_bytes)
    throw std::invalid_argument(where + ": " + std::to_string(bytes) + " bytes of data for shape " +
                                shape_text(shape, rank) + " (" + std::to_string(want_bytes) + " expected)");
  for (std::uint32_t b = 0; b < buffers; ++b) {
    const void* data = nullptr;
    std::uint64_t size = 0;
    TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
    std::int64_t memory_id = 0;
    check(TRITONBACKEND_InputBuffer(input, b, &data, &size, &memory, &memory_id), expected.name.c_str());
    if (memory == TRITONSERVER_MEMORY_GPU) throw std::invalid_argument(where + ": GPU memory is not read by this backend");
    if (copied + size > want_bytes) throw std::invalid_argument(where + ": more data than its shape holds");
    std::memcpy(static_cast<char*>(tensor.data_ptr()) + copied, data, size);
    copied += size;
  }
  return tensor;
}

void read_request(const ModelState& model, Pending& pending) {
  bool batched = model.max_batch_size > 0;
  std::uint32_t count = 0;
  check(TRITONBACKEND_RequestInputCount(pending.request, &count), "counting the inputs");
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    check(TRITONBACKEND_RequestInputName(pending.request, i, &name), "reading an input name");
    bool known = false;
    for (const TensorFacts& f : model.facts.inputs) known = known || f.name == name;
    if (!known) throw std::invalid_argument("input `" + std::string(name) + "`: the model has no such input");
  }
  for (const TensorFacts& f : model.facts.inputs) {
    TRITONBACKEND_Input* input = nullptr;
    if (TRITONSERVER_Error* error = TRITONBACKEND_RequestInput(pending.request, f.name.c_str(), &input)) {
      TRITONSERVER_ErrorDelete(error);
      throw std::invalid_argument("input `" + f.name + "` is missing from the request");
    }
    const ConfigTensor* expected = nullptr;
    for (const ConfigTensor& t : model.inputs) expected = t.name == f.name ? &t : expected;
    if (expected == nullptr) throw std::invalid_argument("input `" + f.name + "` is not in the model's config");
    pending.inputs.push_back(read_input(input, *expected, batched));
  }
  if (!batched || pending.inputs.empty()) return;
  pending.batch = pending.inputs[0].size(0);
  for (std::size_t i = 1; i < pending.inputs.size(); ++i)
    if (pending.inputs[i].size(0) != pending.batch)
      throw std::invalid_argument("input `" + model.facts.inputs[i].name + "`: batch size " +
                                  std::to_string(pending.inputs[i].size(0)) + ", but `" + model.facts.inputs[0].name +
                                  "` has " + std::to_string(pending.batch));
}

// The outputs the request asks for, by index (every output when it names none).
std::vector<std::size_t> requested_outputs(const ModelState& model, TRITONBACKEND_Request* request) {
  std::uint32_t count = 0;
  check(TRITONBACKEND_RequestOutputCount(request, &count), "counting the requested outputs");
  std::vector<std::size_t> indices;
  for (std::size_t k = 0; k < model.facts.outputs.size(); ++k) {
    bool wanted = count == 0;
    for (std::uint32_t j = 0; j < count && !wanted; ++j) {
      const char* name = nullptr;
      check(TRITONBACKEND_RequestOutputName(request, j, &name), "reading a requested output");
      wanted = model.facts.outputs[k].name == name;
    }
    if (wanted) indices.push_back(k);
  }
  return indices;
}

void send_outputs(const ModelState& model, TRITONBACKEND_Request* request, const std::vector<at::Tensor>& outputs) {
  TRITONBACKEND_Response* response = nullptr;
  check(TRITONBACKEND_ResponseNew(&response, request), "creating the response");
  TRITONSERVER_Error* failure = guarded(TRITONSERVER_ERROR_INTERNAL, "", [&] {
    for (std::size_t k : requested_outputs(model, request)) {
      at::Tensor out = outputs.at(k).to(at::kCPU).contiguous();
      std::vector<std::int64_t> shape(out.sizes().begin(), out.sizes().end());
      TRITONBACKEND_Output* output = nullptr;
      const std::string& name = model.facts.outputs[k].name;
      check(TRITONBACKEND_ResponseOutput(response, &output, name.c_str(), wire_type(out.scalar_type()), shape.data(),
                                         static_cast<std::uint32_t>(shape.size())), name.c_str());
      void* buffer = nullptr;
      std::uint64_t bytes = out.numel() * out.element_size();
      TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
      std::int64_t memory_id = 0;
      check(TRITONBACKEND_OutputBuffer(output, &buffer, bytes, &memory, &memory_id), name.c_str());
      if (memory == TRITONSERVER_MEMORY_GPU) throw std::runtime_error("output `" + name + "`: given GPU memory");
      if (bytes) std::memcpy(buffer, out.data_ptr(), bytes);
    }
  });
  check(TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, failure), "sending the response");
}

void send_error(TRITONBACKEND_Request* request, TRITONSERVER_Error_Code code, const std::string& message) {
  TRITONBACKEND_Response* response = nullptr;
  if (TRITONSERVER_Error* error = TRITONBACKEND_ResponseNew(&response, request)) {
    TRITONSERVER_ErrorDelete(error);
    return;
  }
  if (TRITONSERVER_Error* error =
          TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, new_error(code, message)))
    TRITONSERVER_ErrorDelete(error);
}

// Requests whose inputs agree in every dim but the batch dim, which one run can take together.
std::vector<std::vector<Pending*>> merge_groups(const ModelState& model, std::vector<Pending>& pending) {
  std::map<std::vector<std::vector<std::int64_t>>, std::vector<Pending*>> groups;
  std::vector<std::vector<Pending*>> alone;
  for (Pending& p : pending) {
    if (!p.error.empty()) continue;
    if (model.max_batch_size <= 0) {
      alone.push_back({&p});
      continue;
    }
    std::vector<std::vector<std::int64_t>> key;
    for (const at::Tensor& t : p.inputs) key.emplace_back(t.sizes().begin() + 1, t.sizes().end());
    groups[key].push_back(&p);
  }
  for (auto& [key, group] : groups) alone.push_back(std::move(group));
  return alone;
}

}  // namespace

namespace {

struct Timing {
  std::uint64_t exec_start, compute_start = 0, compute_end = 0;
};

void report(TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request* request, bool success, const Timing& t) {
  std::uint64_t end = now_ns();
  std::uint64_t start = t.compute_start ? t.compute_start : end, stop = t.compute_end ? t.compute_end : end;
  if (TRITONSERVER_Error* error =
          TRITONBACKEND_ModelInstanceReportStatistics(instance, request, success, t.exec_start, start, stop, end))
    TRITONSERVER_ErrorDelete(error);
}

void report_batch(TRITONBACKEND_ModelInstance* instance, std::int64_t size, const Timing& t) {
  if (TRITONSERVER_Error* error = TRITONBACKEND_ModelInstanceReportBatchStatistics(
          instance, static_cast<std::uint64_t>(size), t.exec_start, t.compute_start, t.compute_end, now_ns()))
    TRITONSERVER_ErrorDelete(error);
}

// One run for a group: the inputs concatenated along the batch dim, the outputs narrowed back.
void run_group(ModelState& model, TRITONBACKEND_ModelInstance* instance, const std::vector<Pending*>& group,
               Timing timing) {
  std::int64_t total = 0;
  for (const Pending* p : group) total += p->batch;
  std::vector<at::Tensor> outputs;
  std::string failure;
  timing.compute_start = now_ns();
  try {
    std::vector<at::Tensor> inputs;
    for (std::size_t i = 0; i < group[0]->inputs.size(); ++i) {
      std::vector<at::Tensor> parts;
      for (const Pending* p : group) parts.push_back(p->inputs[i]);
      at::Tensor merged = parts.size() == 1 ? parts[0] : at::cat(parts, 0);
      inputs.push_back(merged.to(model.runner->device()));
    }
    outputs = run_naming_calls(*model.runner, inputs);
  } catch (const std::exception& e) {
    failure = client_text(model, e);
  }
  timing.compute_end = now_ns();
  if (!failure.empty() && group.size() > 1) {
    // A merged run failed: each request runs alone, so that well-formed requests succeed and no
    // client reads another's error (issue 54 item 7). A failure costs one run per request more.
    report_batch(instance, model.max_batch_size > 0 ? total : 1, timing);
    for (Pending* p : group) run_group(model, instance, {p}, Timing{now_ns()});
    return;
  }
  std::int64_t offset = 0;
  for (Pending* p : group) {
    bool sent = failure.empty();
    if (sent) {
      std::vector<at::Tensor> mine;
      for (const at::Tensor& out : outputs)
        mine.push_back(model.max_batch_size > 0 && out.dim() > 0 && out.size(0) == total ? out.narrow(0, offset, p->batch)
                                                                                        : out);
      TRITONSERVER_Error* error = guarded(TRITONSERVER_ERROR_INTERNAL, "", [&] { send_outputs(model, p->request, mine); });
      if (error) log(TRITONSERVER_LOG_ERROR, std::string("externspec: ") + TRITONSERVER_ErrorMessage(error));
      if (error) TRITONSERVER_ErrorDelete(error);
    } else {
      send_error(p->request, TRITONSERVER_ERROR_INTERNAL, failure);
    }
    offset += p->batch;
    report(instance, p->request, sent, timing);
  }
  report_batch(instance, model.max_batch_size > 0 ? total : 1, timing);
}

}  // namespace

void execute(ModelState& model, TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
             std::uint32_t count) {
  Timing timing{now_ns()};
  std::vector<Pending> pending;
  for (std::uint32_t r = 0; r < count; ++r) pending.push_back(Pending{requests[r], {}, 1, ""});
  for (Pending& p : pending) {
    try {
      read_request(model, p);
    } catch (const std::exception& e) {
      p.error = client_text(model, e);
      send_error(p.request, TRITONSERVER_ERROR_INVALID_ARG, p.error);
      report(instance, p.request, false, timing);
    }
  }
  for (const auto& group : merge_groups(model, pending)) run_group(model, instance, group, timing);
  for (Pending& p : pending)
    if (TRITONSERVER_Error* error = TRITONBACKEND_RequestRelease(p.request, TRITONSERVER_REQUEST_RELEASE_ALL))
      TRITONSERVER_ErrorDelete(error);
}

}  // namespace externspec::triton
