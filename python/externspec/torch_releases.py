"""What each supported torch release adds to the one before it in the model libraries it compiles: the
C-shim functions its libtorch exports, which a library it compiles may import ("import"), and the C
entry points every library it compiles exports ("export"). The runner's table,
cpp/csrc/aoti_runner/torch_releases.inc, as data for Python (`externspec.runtimes`); the wheel ships no
C++ sources, so the table is here too, and tests/torch/test_runtimes.py holds the two equal."""

from __future__ import annotations

# name -> (kind, the release that added it), in the .inc's order.
RELEASE_NAMES: dict[str, tuple[str, str]] = {
    "aoti_torch_cpu__grouped_mm": ("import", "2.12"),
    "aoti_torch_cpu_rand_like": ("import", "2.12"),
    "aoti_torch_cpu_rand_like_generator": ("import", "2.12"),
    "aoti_torch_cpu_randint_like": ("import", "2.12"),
    "aoti_torch_cpu_randint_like_low_dtype": ("import", "2.12"),
    "aoti_torch_cpu_randn_like": ("import", "2.12"),
    "aoti_torch_cpu_randn_like_generator": ("import", "2.12"),
    "aoti_torch_dtype_float4_e2m1fn_x2": ("import", "2.12"),
    "aoti_torch_dtype_float8_e8m0fnu": ("import", "2.12"),
    "aoti_torch_cpu_grid_sampler_3d": ("import", "2.13"),
    "aoti_torch_cpu_grid_sampler_3d_backward": ("import", "2.13"),
    "AOTInductorGetLastError": ("export", "2.13"),
    "AOTInductorModelContainerExtractConstantsMapEntries": ("export", "2.13"),
    "AOTInductorModelContainerUpdateConstantBufferFromCpu": ("export", "2.13"),
    "AOTInductorModelContainerUpdateConstantBufferFromCpuPairs": ("export", "2.13"),
    "AOTInductorModelContainerUpdateConstantBufferPairs": ("export", "2.13"),
    "AOTInductorModelContainerUpdateInactiveConstantBufferPairs": ("export", "2.13"),
    "AOTInductorModelCreateV2": ("export", "2.13"),
    "AOTInductorModelUpdateConstantsMapV2": ("export", "2.13"),
    "AOTInductorModelContainerCreateWithExternalConstants": ("export", "2.14"),
    "AOTInductorModelContainerDidCallLoadConstants": ("export", "2.14"),
    "AOTInductorSetPinnedAsyncConstantsCopyStageBufferBytes": ("export", "2.14"),
    "AOTInductorSetUsePinnedAsyncConstantsCopy": ("export", "2.14"),
    "AOTInductorModelContainerGetStreamAffinityModelIndexForTesting": ("export", "2.15"),
    "AOTInductorModelContainerSetUseStreamAffinity": ("export", "2.15"),
    "AOTInductorSetPinnedAsyncConstantsCopyCpuThreads": ("export", "2.15"),
}
