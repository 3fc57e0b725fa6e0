"""What the transformer zoo (benchmarks/transformer_zoo.py) compiles: whole `transformers`
architectures from small random-weight configs, and the three models of issue 34's table.

Each model is built in eval mode with `torch.manual_seed(0)`, called on batch 2 with short inputs,
and returns one tensor: a `transformers` model's first output (the last hidden state, or the
encoder's), so eager and both runners compare one tensor. Sizes are tiny (hidden 32, two layers,
four heads) so that a lite-mode compile takes 10 to 20 s on two cores.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

BATCH, SEQ, VOCAB = 2, 8, 100
# The transformer sizes every text and vision config below shares.
_SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
_DECODER = dict(_SMALL, vocab_size=VOCAB, num_key_value_heads=2, max_position_embeddings=64, use_cache=False)


class FirstOutput(torch.nn.Module):
    """A `transformers` model called with keyword inputs (`keys`, in the order of the positional
    ones torch.export passes), returning its first output."""

    def __init__(self, model: torch.nn.Module, keys: tuple[str, ...]) -> None:
        super().__init__()
        self.model = model
        self.keys = keys

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(**dict(zip(self.keys, args, strict=True)))[0]


class IntAdd(torch.nn.Module):
    """Issue 34's third row: int64 `add` with alpha=3, then + 1."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.add(a, b, alpha=3) + 1


@dataclass(frozen=True)
class ZooModel:
    name: str
    make: Callable[[], torch.nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    group: str = "transformers"  # or "issue": the three models of issue 34's table

    def module(self) -> torch.nn.Module:
        torch.manual_seed(0)
        return self.make().eval()


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(1)


def _text() -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and an attention mask whose second row has two padded positions."""
    ids = torch.randint(3, VOCAB, (BATCH, SEQ), generator=_gen())
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, -2:] = 0
    return ids, mask


def _ids() -> tuple[torch.Tensor]:
    return (_text()[0],)


def _randn(*shape: int) -> tuple[torch.Tensor]:
    return (torch.randn(*shape, generator=_gen()),)


def _hf(model_class: str, config_class: str, keys: tuple[str, ...], **config: Any) -> Callable[[], torch.nn.Module]:
    """A factory of `transformers.<model_class>(<config_class>(**config))` behind FirstOutput."""

    def make() -> torch.nn.Module:
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        model = getattr(transformers, model_class)(cfg)
        return FirstOutput(model.get_encoder() if model_class == "WhisperModel" else model, keys)

    return make


_TEXT = ("input_ids", "attention_mask")
_IDS = ("input_ids",)
_PIXELS = ("pixel_values",)
_IMAGE = dict(num_channels=3, image_size=32)
_SPECIAL_IDS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # within VOCAB (the defaults are not)

MODELS = {m.name: m for m in [
    ZooModel("bert", _hf("BertModel", "BertConfig", _TEXT, vocab_size=VOCAB, max_position_embeddings=64, **_SMALL),
             _text),
    ZooModel("distilbert", _hf("DistilBertModel", "DistilBertConfig", _TEXT, vocab_size=VOCAB, dim=32, n_layers=2,
                               n_heads=4, hidden_dim=64, max_position_embeddings=64), _text),
    ZooModel("roberta", _hf("RobertaModel", "RobertaConfig", _TEXT, vocab_size=VOCAB, max_position_embeddings=66,
                            **_SMALL), _text),
    ZooModel("gpt2", _hf("GPT2Model", "GPT2Config", _TEXT, vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                         n_positions=64, use_cache=False, **_SPECIAL_IDS), _text),
    ZooModel("llama", _hf("LlamaModel", "LlamaConfig", _TEXT, **_DECODER), _text),
    ZooModel("qwen2", _hf("Qwen2Model", "Qwen2Config", _TEXT, **_DECODER), _text),
    ZooModel("mistral", _hf("MistralModel", "MistralConfig", _TEXT, **_DECODER), _text),
    ZooModel("gemma", _hf("GemmaModel", "GemmaConfig", _TEXT, head_dim=8, **_DECODER, **_SPECIAL_IDS), _text),
    ZooModel("t5_encoder", _hf("T5EncoderModel", "T5Config", _TEXT, vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64,
                               num_layers=2, num_heads=4), _text),
    ZooModel("bart", _hf("BartModel", "BartConfig", _IDS, vocab_size=VOCAB, d_model=32, encoder_layers=2,
                         decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                         decoder_ffn_dim=64, max_position_embeddings=64, use_cache=False), _ids),
    ZooModel("vit", _hf("ViTModel", "ViTConfig", _PIXELS, patch_size=8, **_IMAGE, **_SMALL),
             lambda: _randn(BATCH, 3, 32, 32)),
    ZooModel("swin", _hf("SwinModel", "SwinConfig", _PIXELS, patch_size=4, embed_dim=16, depths=[1, 1],
                         num_heads=[2, 4], window_size=4, **_IMAGE), lambda: _randn(BATCH, 3, 32, 32)),
    ZooModel("whisper_encoder", _hf("WhisperModel", "WhisperConfig", ("input_features",), vocab_size=VOCAB,
                                    num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=1,
                                    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                    decoder_ffn_dim=64, max_source_positions=16, max_target_positions=16,
                                    decoder_start_token_id=2, **_SPECIAL_IDS),
             lambda: _randn(BATCH, 16, 32)),
    ZooModel("wav2vec2", _hf("Wav2Vec2Model", "Wav2Vec2Config", ("input_values",), conv_dim=(16, 16),
                             conv_stride=(4, 4), conv_kernel=(8, 4), num_conv_pos_embeddings=16,
                             num_conv_pos_embedding_groups=4, **_SMALL), lambda: _randn(BATCH, 400)),
    ZooModel("convnext", _hf("ConvNextModel", "ConvNextConfig", _PIXELS, hidden_sizes=[8, 16], depths=[1, 1],
                             num_stages=2, patch_size=4, **_IMAGE), lambda: _randn(BATCH, 3, 32, 32)),
    ZooModel("resnet", _hf("ResNetModel", "ResNetConfig", _PIXELS, num_channels=3, embedding_size=8,
                           hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic"),
             lambda: _randn(BATCH, 3, 32, 32)),
    ZooModel("issue_mlp", lambda: _issue_zoo().MLP(), lambda: _randn(4, 16), group="issue"),
    ZooModel("issue_transformer_layer", lambda: torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True),
             lambda: _randn(BATCH, 5, 32), group="issue"),
    ZooModel("issue_int_add", IntAdd, lambda: (torch.arange(12).reshape(4, 3), torch.arange(12).reshape(4, 3) * 7),
             group="issue"),
]}


def _issue_zoo() -> Any:
    from tests.support import zoo  # the lite zoo's MLP: two linear layers (addmm), GELU, softmax

    return zoo


def cache_key() -> str:
    """What a compiled package depends on: this file, torch's and transformers' versions."""
    import transformers

    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(f"{torch.__version__}|{transformers.__version__}".encode())
    return h.hexdigest()[:16]


def compile_model(model: ZooModel, mode: str, package: Path, io: Path) -> None:
    """Export `model` (non-strict), compile it with AOTInductor in `mode` ("lite":
    `torch._inductor.lite_mode_options`, or "default") into `package`, and save its inputs and
    eager output to `io`."""
    module, inputs = model.module(), model.inputs()
    with torch.no_grad():
        want = module(*inputs)
    torch.save({"inputs": inputs, "want": want}, io)
    options = dict(torch._inductor.lite_mode_options) if mode == "lite" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's and transformers' own, from inside export
        ep = torch.export.export(module, inputs, strict=False)
        torch._inductor.aoti_compile_and_package(ep, package_path=str(package), inductor_configs=options)


def extern_nodes(package: Path) -> int:
    """The extern-kernel nodes of the package's `*.wrapper.json` (0 without one)."""
    import zipfile

    import externspec as es

    with zipfile.ZipFile(package) as z:
        names = [n for n in z.namelist() if n.endswith(".wrapper.json")]
        return len(es.loads(z.read(names[0]), es.ExternKernelNodes).nodes) if names else 0
