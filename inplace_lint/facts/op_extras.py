"""Op knowledge that the generated table (``data/torch_ops.json``) does not carry.

Each set says why it is typed by hand: a Python-level API the generator does not probe (grad
modes, checkpointing, factories under other names), or a fact about an op's use rather than
its autograd node (which of two returned tensors holds integer indices).
"""

from __future__ import annotations

#: Grad modes: context managers and decorators, not ops; the generator probes ops only.
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})


_ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})


#: ``torch.nn`` classes that make tensors, not modules: the generator probes modules (a
#: capitalized ``torch.nn`` name it has no entry for is taken for a module it could not build).
_NN_TENSOR_CLASSES = frozenset(
    {"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.UninitializedParameter"}
    | {"torch.nn.UninitializedBuffer"}
)


#: Checkpointing re-runs a function in backward: Python-level control flow, not an op.
_CHECKPOINT = frozenset(
    {"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"}
)


#: Python builtins that look at a value without reading its data (no stale read).
_METADATA_CALLS = frozenset({"len", "isinstance", "type", "id", "print", "repr", "str", "hash"})


#: ``torch`` names (prefixes) that neither take nor give tensor data: configuration,
#: devices, I/O and sub-packages the generator does not probe.
_NON_TENSOR_TORCH = (
    "torch.is_tensor", "torch.device", "torch.Size", "torch.finfo", "torch.iinfo",
    "torch.get_default_dtype", "torch.manual_seed", "torch.set_grad_enabled", "torch.cuda.",
    "torch.jit.", "torch.distributed.", "torch.compile", "torch.is_grad_enabled", "torch.numel",
    "torch.backends.", "torch.utils.data.", "torch.save", "torch.load", "torch.set_",
    "torch.is_floating_point", "torch.typename", "torch.is_inference_mode_enabled",
)  # fmt: skip


#: Tensor constructors. The generated ``factory_functions`` list comes from the table;
#: these are kept as well because some (``torch.Tensor``, ``torch.FloatTensor``,
#: ``torch.from_numpy``) are classes or numpy bridges the generator does not call.
_FACTORY_FALLBACK = frozenset(
    {
        "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.randn", "torch.rand",
        "torch.randint", "torch.arange", "torch.linspace", "torch.logspace", "torch.tensor",
        "torch.as_tensor", "torch.from_numpy", "torch.eye", "torch.zeros_like", "torch.ones_like",
        "torch.empty_like", "torch.full_like", "torch.randn_like", "torch.rand_like",
        "torch.randint_like", "torch.randperm", "torch.normal", "torch.bernoulli",
        "torch.multinomial", "torch.empty_strided", "torch.Tensor", "torch.FloatTensor",
        "torch.LongTensor", "torch.tril_indices", "torch.triu_indices",
    }
)  # fmt: skip


#: The in-place method an augmented assignment calls on a tensor (Python's data model
#: maps ``+=`` to ``__iadd__``, which torch implements as ``add_``).
_AUG_METHOD = {"+=": "add_", "-=": "sub_", "*=": "mul_", "/=": "div_", "**=": "pow_"}


#: In-place methods that change a tensor's shape but not its values (the version still moves).
#: The table records that they write, not that the values survive.
_SHAPE_ONLY = frozenset(
    {"squeeze_", "unsqueeze_", "transpose_", "t_", "swapdims_", "swapaxes_", "as_strided_"}
)


#: Ops that keep an input only to compute the gradient of the other operand. The table says
#: which inputs are saved, not for whose gradient.
_SAVES_INPUT_FOR_OTHER = frozenset(
    {"mul", "mul_", "multiply", "div", "div_", "divide", "true_divide", "__mul__", "__truediv__"}
)


#: Ops whose two results are (values, integer indices) when unpacked: ``v, i = x.topk(k)``.
#: The table records saves, not the dtype of each returned tensor.
_VALUES_AND_INDICES = frozenset(
    {"topk", "sort", "max", "min", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}
)


#: Factories whose result is a buffer to fill in (not data): a helper writing it is expected.
#: A fact about how the result is used, which no autograd probe can show.
_BLANK_FACTORIES = frozenset(
    {"zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like"}
)

#: Lookups that renormalise the rows they read in place, under no_grad, when called with
#: ``max_norm`` (documented in ``nn.Embedding``; pytorch#26596): the weight's version moves at
#: each call, which the generator's probes (made without ``max_norm``) do not record. The
#: value is the position of ``max_norm`` among the module's constructor arguments, or among
#: the function's arguments.
_RENORM_LOOKUPS = {"torch.nn.Embedding": 3, "torch.nn.functional.embedding": 3}
