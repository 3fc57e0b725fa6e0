"""Triton's Python backend serving a `.pt2` package (bench_triton.py's baselines): the model's
`parameters` say which runner (`runner`: "torch", torch._inductor.aoti_load_package, or "es",
es.cpp.AOTIRunner), which file registers the package's custom op (`ops`) and where torch and
externspec are (`sys_path.txt` beside this file: the stub process starts with a path of its own and
no environment of ours). One request per run, as Triton's torch_aoti platform runs them."""

import json
import os
import runpy
import sys
from pathlib import Path

sys.path[:0] = Path(__file__).with_name("sys_path.txt").read_text().split(os.pathsep)

import torch  # noqa: E402
import triton_python_backend_utils as pb_utils  # noqa: E402


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        self.torch = torch
        runpy.run_path(params["ops"])
        path = f"{args['model_repository']}/{args['model_version']}/model.pt2"
        if params["runner"] == "torch":
            model = torch._inductor.aoti_load_package(path)
            self.run = lambda inputs: model(*inputs)
        else:
            import externspec as es

            runner = es.cpp.AOTIRunner(path)
            self.run = runner.run_flat
        self.inputs = [i["name"] for i in config["input"]]
        self.outputs = [o["name"] for o in config["output"]]

    def execute(self, requests):
        responses = []
        for request in requests:
            inputs = [self.torch.from_numpy(pb_utils.get_input_tensor_by_name(request, n).as_numpy())
                      for n in self.inputs]
            with self.torch.no_grad():
                outputs = self.run(inputs)
            outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
            tensors = [pb_utils.Tensor(n, o.contiguous().numpy())
                       for n, o in zip(self.outputs, outputs, strict=True)]
            responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
        return responses
