"""The probing plan, the only part written by hand: which arguments to try for which op.

Every fact in the table is observed from torch; these recipes only say how to call things.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .specs import BUF, SPD, SQ, B, C, D, I, L, Make, R, Recipe, T

# Generic recipes, tried (after any op-specific ones) in this order for every candidate.
GENERIC: list[Recipe] = [
    R(T()),
    R(T(), T()),
    R(T(), T(), T()),
    R(T(), 1),
    R(T(), 2),
    R(T(), 0.5),
    R(T(), 0, 1),
    R(T(), 0.3, 0.7),
    R(T(), T(), 0.5),
    R(T(), (4, 3)),
    R(T(), (1, 0)),
    R(T(), (2, 3, 4)),
    R(T(), 0, 0, 2),
    R(T(), 0, 2, 1),
    R(T(), 1, (2, 2)),
    R(T(), (2, 2), (1, 2)),
    R(T(3, 4), T(4, 5)),
    R(T(2, 3, 4), T(2, 4, 5)),
    R(T(3, 5), T(3, 4), T(4, 5)),
    R(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    R(T(3, 5), T(2, 3, 4), T(2, 4, 5)),
    R(T(4)),
    R(T(4), T(4)),
    R(T(3), T(4)),
    R(T(3, 4), T(4)),
    R(T(3), T(3, 4), T(4)),
    R(T(3, 4), T(3), T(4)),
    R(SQ),
    R(SQ, SQ),
    R(SPD),
    R(T(), 1, L(4, 3, 2)),
    R(T(), 0, L(3, 2)),
    R(T(), 0, L(3, 2), 0.5),
    R(T(), 1, L(4, 3, 2), T(3, 2)),
    R(T(), 1, L(4, 3, 2), T(3, 2), "sum"),
    R(T(), 0, L(3, 2), T(2, 4)),
    R(T(), B()),
    R(T(), B(), 0.5),
    R(T(), B(), T()),
    R(B(), T(), T()),
    R(T(), L(12, 5)),
    R(T(), L(12, 5), T(5)),
    R(T(), (L(3, 2),), T(2, 4)),
    R([T(), T()]),
    R([T(), T()], 1),
    R(T(2, 4, 6)),
    R(T(2, 4, 6, 6)),
    R(C()),
    R(C(), C()),
    R(D()),
    R(I()),
    R(I(), I()),
    R(I(), 1),
    R(B()),
    R(B(), B()),
]

# Op-specific recipes, looked up by qualified name, then bare name, then the name without a
# trailing "_" (so ``mul_`` and ``torch.relu_`` share the recipes of ``mul`` and ``relu``).
SPECIFIC: dict[str, list[Recipe]] = {
    # Scalar-exponent / scalar-bound forms, the way these ops are normally called.
    "pow": [R(T(), 2.0)],
    "__pow__": [R(T(), 2.0)],
    "__ipow__": [R(T(), 2.0)],
    "__rpow__": [R(T(), 2.0)],
    "float_power": [R(T(), 2.0)],
    "float_power_": [R(D(), 2.0)],
    "clamp": [R(T(), 0.3, 0.7)],
    "clip": [R(T(), 0.3, 0.7)],
    "clamp_min": [R(T(), 0.3)],
    "clamp_max": [R(T(), 0.7)],
    "item": [R(T(1))],
    # Shapes, views and indexing.
    "softmax": [R(T(), 1)],
    "softmin": [R(T(), 1)],
    "log_softmax": [R(T(), 1)],
    "threshold": [R(T(), 0.5, 0.0)],
    "repeat": [R(T(), (2, 1))],
    "tile": [R(T(), (2, 1))],
    "expand": [R(T(), (2, 3, 4))],
    "unflatten": [R(T(), 1, (2, 2))],
    "as_strided": [R(T(), (2, 2), (1, 2))],
    "view_as_complex": [R(T(3, 2))],
    "take_along_dim": [R(T(), L(4, 3, 2), 1)],
    "split_with_sizes": [R(T(), [1, 2])],
    "unsafe_split_with_sizes": [R(T(), [1, 2])],
    "split_with_sizes_copy": [R(T(), [1, 2])],
    "dsplit": [R(T(2, 4, 6), 2)],
    "new_full": [R(T(), (2, 2), 0.5)],
    "diagonal_scatter": [R(T(), T(3))],
    "as_strided_scatter": [R(T(), T(2, 2), (2, 2), (1, 2))],
    "embedding_renorm_": [R(T(10, 4), L(10, 3), 1.0, 2.0)],
    "index_reduce": [R(T(), 0, L(3, 2), T(2, 4), "prod")],
    "select_scatter": [R(T(), T(4), 0, 0)],
    "matrix_power": [R(SQ, 2)],
    "householder_product": [R(T(4, 3), T(3))],
    "solve_triangular": [R(SQ, SQ, upper=True)],
    "tensorinv": [R(SQ, 1)],
    "tensorsolve": [R(SQ, T(4))],
    "cross": [R(T(4, 3), T(4, 3))],
    "renorm": [R(T(), 2.0, 0, 1.0)],
    "einsum": [R("ij,jk->ik", T(3, 4), T(4, 5))],
    "tensordot": [R(T(3, 4), T(4, 5), 1)],
    "multi_dot": [R([T(3, 4), T(4, 5)])],
    "stft": [R(T(16), 4, return_complex=True)],
    "polygamma": [R(1, T())],
    "apply_": [R(T(), lambda value: value + 1.0)],
    "map_": [R(T(), T(), lambda a, b: a + b)],
    "map2_": [R(T(), T(), T(), lambda a, b, c: a + b + c)],
    # Dropout-like ops are probed in training mode, the mode in which backward happens.
    "dropout": [R(T(), 0.5, True)],
    "native_dropout": [R(T(), 0.5, True)],
    "alpha_dropout": [R(T(), 0.5, True)],
    "feature_dropout": [R(T(2, 4, 6, 6), 0.5, True)],
    "feature_alpha_dropout": [R(T(2, 4, 6, 6), 0.5, True)],
    "dropout1d": [R(T(2, 4, 6), 0.5, True)],
    "dropout2d": [R(T(2, 4, 6, 6), 0.5, True)],
    "dropout3d": [R(T(2, 4, 4, 4, 4), 0.5, True)],
    "rrelu": [R(T(), 0.125, 1.0 / 3.0, True)],
    # Layers.
    "linear": [R(T(2, 4), T(3, 4), T(3))],
    "bilinear": [R(T(2, 4), T(2, 5), T(3, 4, 5), T(3))],
    "conv1d": [R(T(2, 4, 6), T(3, 4, 3), T(3))],
    "conv2d": [R(T(2, 4, 6, 6), T(3, 4, 3, 3), T(3))],
    "conv3d": [R(T(2, 4, 4, 4, 4), T(3, 4, 3, 3, 3), T(3))],
    "conv_transpose1d": [R(T(2, 4, 6), T(4, 3, 3), T(3))],
    "conv_transpose2d": [R(T(2, 4, 6, 6), T(4, 3, 3, 3), T(3))],
    "conv_transpose3d": [R(T(2, 4, 4, 4, 4), T(4, 3, 3, 3, 3), T(3))],
    "conv_tbc": [R(T(6, 2, 4), T(3, 4, 5), T(5))],
    "convolution": [
        R(T(2, 4, 6, 6), T(3, 4, 3, 3), T(3), (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    ],
    "prelu": [R(T(2, 4), T(1))],
    "embedding": [R(T(10, 4), L(10, 2, 3))],
    "torch.nn.functional.embedding": [R(L(10, 2, 3), T(10, 4))],
    "torch.nn.functional.embedding_bag": [R(L(10, 2, 3), T(10, 4))],
    "one_hot": [R(L(4, 3))],
    # Normalisation.
    "batch_norm": [R(T(2, 4, 5), T(4), T(4), BUF(4), BUF(4), True, 0.1, 1e-5, False)],
    "torch.nn.functional.batch_norm": [R(T(2, 4, 5), BUF(4), BUF(4), T(4), T(4), True)],
    "native_batch_norm": [R(T(2, 4, 5), T(4), T(4), BUF(4), BUF(4), True, 0.1, 1e-5)],
    "instance_norm": [R(T(2, 4, 5), T(4), T(4), None, None, True, 0.1, 1e-5, False)],
    "torch.nn.functional.instance_norm": [R(T(2, 4, 5), None, None, T(4), T(4))],
    "layer_norm": [R(T(2, 4), (4,), T(4), T(4))],
    "native_layer_norm": [R(T(2, 4), (4,), T(4), T(4), 1e-5)],
    "group_norm": [R(T(2, 4, 5), 2, T(4), T(4))],
    "native_group_norm": [R(T(2, 4, 5), T(4), T(4), 2, 4, 5, 2, 1e-5)],
    "rms_norm": [R(T(2, 4), (4,), T(4))],
    "local_response_norm": [R(T(2, 4, 5), 2)],
    # Pooling and resampling.
    "max_pool1d": [R(T(2, 4, 6), 2)],
    "max_pool2d": [R(T(2, 4, 6, 6), 2)],
    "max_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "max_pool1d_with_indices": [R(T(2, 4, 6), 2)],
    "max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2)],
    "max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2)],
    "avg_pool1d": [R(T(2, 4, 6), 2)],
    "avg_pool2d": [R(T(2, 4, 6, 6), 2)],
    "avg_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_avg_pool1d": [R(T(2, 4, 6), 2)],
    "adaptive_avg_pool2d": [R(T(2, 4, 6, 6), 2)],
    "adaptive_avg_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_max_pool1d": [R(T(2, 4, 6), 2)],
    "adaptive_max_pool2d": [R(T(2, 4, 6, 6), 2)],
    "adaptive_max_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_max_pool1d_with_indices": [R(T(2, 4, 6), 2)],
    "adaptive_max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2)],
    "adaptive_max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2)],
    "lp_pool1d": [R(T(2, 4, 6), 2.0, 2)],
    "lp_pool2d": [R(T(2, 4, 6, 6), 2.0, 2)],
    "lp_pool3d": [R(T(2, 4, 4, 4, 4), 2.0, 2)],
    "fractional_max_pool2d": [R(T(2, 4, 6, 6), 2, output_size=3)],
    "fractional_max_pool3d": [R(T(2, 4, 4, 4, 4), 2, output_size=2)],
    "fractional_max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2, output_size=3)],
    "fractional_max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2, output_size=2)],
    "max_unpool1d": [R(T(2, 4, 3), L(6, 2, 4, 3), 2)],
    "max_unpool2d": [R(T(2, 4, 3, 3), L(36, 2, 4, 3, 3), 2)],
    "max_unpool3d": [R(T(2, 4, 2, 2, 2), L(64, 2, 4, 2, 2, 2), 2)],
    "pixel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "pixel_unshuffle": [R(T(2, 4, 6, 6), 2)],
    "channel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "native_channel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "pad": [R(T(), (1, 1))],
    "constant_pad_nd": [R(T(), (1, 1))],
    "interpolate": [R(T(2, 4, 6), scale_factor=2.0)],
    "upsample": [R(T(2, 4, 6), scale_factor=2.0)],
    "upsample_nearest": [R(T(2, 4, 6, 6), scale_factor=2.0)],
    "upsample_bilinear": [R(T(2, 4, 6, 6), scale_factor=2.0)],
    "grid_sample": [R(T(2, 4, 6, 6), T(2, 3, 3, 2))],
    "grid_sampler": [R(T(2, 4, 6, 6), T(2, 3, 3, 2), 0, 0, False)],
    "grid_sampler_2d": [R(T(2, 4, 6, 6), T(2, 3, 3, 2), 0, 0, False)],
    "affine_grid": [R(T(2, 2, 3), (2, 4, 6, 6))],
    "affine_grid_generator": [R(T(2, 2, 3), (2, 4, 6, 6), False)],
    "fold": [R(T(2, 4, 9), (4, 4), 2)],
    "torch.nn.functional.unfold": [R(T(2, 4, 6, 6), 2)],
    # Losses.
    "cross_entropy": [R(T(2, 4), L(4, 2))],
    "nll_loss": [R(T(2, 4), L(4, 2))],
    "multi_margin_loss": [R(T(2, 4), L(4, 2))],
    "multilabel_margin_loss": [R(T(2, 4), L(4, 2, 4))],
    "cosine_embedding_loss": [R(T(2, 4), T(2, 4), BUF(2))],
    "ctc_loss": [R(T(5, 2, 4), L(4, 2, 3, low=1), (5, 5), (3, 3))],
    "linear_cross_entropy": [R(T(2, 4), T(5, 4), L(5, 2))],
    "poisson_nll_loss": [R(T(), T(), True, False, 1e-8, 1)],
}

# Calls without tensor arguments used to recognise factory functions.
FACTORY_RECIPES: list[Recipe] = [
    R(3),
    R(3, 4),
    R((3, 4)),
    R([0.5, 0.25]),
    R([[1, 2], [3, 4]]),
    R(0, 5),
    R(0.0, 1.0, 5),
    R(5, (3,)),
    R(0, 5, (3,)),
    R((3, 4), 0.5),
    R((2, 2), (2, 1)),
    R((3, 4), (1, 0)),
    R(0.0, 1.0, (3,)),
    R([[0, 1], [1, 0]], [1.0, 2.0]),
    R([0, 1, 2], [0, 1], [1.0, 2.0]),
    R(bytearray(16), dtype=torch.float32),
]
LIKE_RECIPES: list[Recipe] = [R(T()), R(T(), 0.5), R(T(), 5)]

# Methods never called while probing: they run backward or install hooks.
SKIPPED_METHODS = frozenset({"backward", "register_hook", "register_post_accumulate_grad_hook"})

# --------------------------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModuleRecipe:
    """Constructor arguments and forward inputs for one module probe."""

    args: tuple[Any, ...]
    inputs: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


def M(args: tuple[Any, ...], *inputs: Any, **kwargs: Any) -> ModuleRecipe:
    """Shorthand for a ModuleRecipe."""
    return ModuleRecipe(args, inputs, kwargs)


MODULE_CTOR_ARGS: list[tuple[Any, ...]] = [(), (4,), (4, 4), (4, 4, 3), (2,), (2, 2), (0.5, 0.0)]
MODULE_INPUTS: list[tuple[Any, ...]] = [
    (T(2, 4),),
    (T(2, 4, 6),),
    (T(2, 4, 6, 6),),
    (T(2, 4, 4, 4, 4),),
    (T(2, 4), T(2, 4)),
]
LOSS_INPUTS: list[tuple[Any, ...]] = [
    (T(2, 4), BUF(2, 4)),
    (T(2, 4), BUF(2, 4), BUF(2, 4)),
    (T(2, 4), T(2, 4), BUF(2)),
    (T(2, 4), L(4, 2)),
    (T(2, 4), L(4, 2, 4)),
]
SEQ = T(3, 2, 4)  # (sequence, batch, features)
MODULE_SPECIFIC: dict[str, list[ModuleRecipe]] = {
    "RNN": [M((4, 5), SEQ)],
    "LSTM": [M((4, 5), SEQ)],
    "GRU": [M((4, 5), SEQ)],
    "MultiheadAttention": [M((4, 2), SEQ, T(3, 2, 4), T(3, 2, 4))],
    "Transformer": [
        M(
            (),
            SEQ,
            T(3, 2, 4),
            d_model=4,
            nhead=2,
            num_encoder_layers=1,
            num_decoder_layers=1,
            dim_feedforward=8,
        )
    ],
    "TransformerEncoderLayer": [M((4, 2, 8), SEQ)],
    "TransformerDecoderLayer": [M((4, 2, 8), SEQ, T(3, 2, 4))],
    "TransformerEncoder": [M((Make(nn.TransformerEncoderLayer, (4, 2, 8)), 1), SEQ)],
    "TransformerDecoder": [M((Make(nn.TransformerDecoderLayer, (4, 2, 8)), 1), SEQ, T(3, 2, 4))],
    "Embedding": [M((10, 4), L(10, 2, 3))],
    "EmbeddingBag": [M((10, 4), L(10, 2, 3))],
    "Bilinear": [M((4, 5, 3), T(2, 4), T(2, 5))],
    "Unflatten": [M((1, (2, 2)), T(2, 4))],
    "Fold": [M(((4, 4), 2), T(2, 4, 9))],
    "Upsample": [M((), T(2, 4, 6), scale_factor=2.0)],
    "UpsamplingNearest2d": [M((), T(2, 4, 6, 6), scale_factor=2.0)],
    "UpsamplingBilinear2d": [M((), T(2, 4, 6, 6), scale_factor=2.0)],
    "FractionalMaxPool2d": [M((2,), T(2, 4, 6, 6), output_size=3)],
    "FractionalMaxPool3d": [M((2,), T(2, 4, 4, 4, 4), output_size=2)],
    "MaxUnpool1d": [M((2,), T(2, 4, 3), L(6, 2, 4, 3))],
    "MaxUnpool2d": [M((2,), T(2, 4, 3, 3), L(36, 2, 4, 3, 3))],
    "MaxUnpool3d": [M((2,), T(2, 4, 2, 2, 2), L(64, 2, 4, 2, 2, 2))],
    "AdaptiveLogSoftmaxWithLoss": [M((4, 10, [5]), T(2, 4), L(10, 2))],
    "CTCLoss": [M((), T(5, 2, 4), L(4, 2, 3, low=1), (5, 5), (3, 3))],
    "CrossEntropyLoss": [M((), T(2, 4), L(4, 2))],
    "LinearCrossEntropyLoss": [M((4, 4), T(2, 4), L(4, 2))],
}
# For ``--detail`` (which forward arguments each module saves): recurrent modules are also
# given their hidden state, the way a loop over time steps calls them.
STATE = T(2, 5)  # (batch, hidden)
LAYER_STATE = T(1, 2, 5)  # (layers, batch, hidden)
MODULE_ARGS_SPECIFIC: dict[str, list[ModuleRecipe]] = {
    "RNNCell": [M((4, 5), T(2, 4), STATE)],
    "GRUCell": [M((4, 5), T(2, 4), STATE)],
    "LSTMCell": [M((4, 5), T(2, 4), (STATE, STATE))],
    "RNN": [M((4, 5), SEQ, LAYER_STATE)],
    "GRU": [M((4, 5), SEQ, LAYER_STATE)],
    "LSTM": [M((4, 5), SEQ, (LAYER_STATE, LAYER_STATE))],
}
CONTAINER_MODULES = frozenset(
    {
        "Module",
        "Container",
        "Sequential",
        "ModuleList",
        "ModuleDict",
        "ParameterList",
        "ParameterDict",
        "DataParallel",
    }
)


def module_recipes(name: str) -> list[ModuleRecipe]:
    """Specific recipes, or every generic constructor with every generic input."""
    if name in MODULE_SPECIFIC:
        return MODULE_SPECIFIC[name]
    inputs = LOSS_INPUTS if "Loss" in name else MODULE_INPUTS
    return [ModuleRecipe(args, example) for args in MODULE_CTOR_ARGS for example in inputs]


def module_args_recipes(name: str) -> list[ModuleRecipe]:
    """Recipes for ``--detail``: with hidden states where a module takes them."""
    return MODULE_ARGS_SPECIFIC.get(name, []) + module_recipes(name)
