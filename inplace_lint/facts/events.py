"""What the dataflow pass observed; rules turn these into findings."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from inplace_lint.facts.hooks import BackwardHooks
from inplace_lint.facts.model import ModuleSpec, SaveRecord, Write


@dataclass(frozen=True, eq=False)
class SavedOverwrite:
    """A tensor saved for backward was overwritten before a backward that needs it."""

    write: Write
    record: SaveRecord
    backward: cst.CSTNode | None  # None when the backward is outside the function
    backward_what: str


#: ``MultiViewWrite.op`` of ``torch.add(a, b, out=buf)`` where ``a`` or ``b`` requires grad
OUT_GRAD = "out="


@dataclass(frozen=True, eq=False)
class MultiViewWrite:
    """A write autograd refuses at once, with grad on: to one of the views ``op``
    (``unbind``, ``chunk``, ``split``) returned, to a view a backward hook or a custom
    Function returned (``op`` says which), or, with ``op`` :data:`OUT_GRAD`, an ``out=``
    call one of whose arguments requires grad."""

    write: Write
    op: str


@dataclass(frozen=True, eq=False)
class StaleRead:
    """A value's old contents are read again after an in-place write changed them."""

    write: Write
    read: cst.CSTNode
    name: str
    how: str
    #: ``read`` is where the tensor was stored into attribute ``name``, which keeps it for
    #: later calls (``self.cache = (k, v)`` before ``k *= scale``)
    stored: bool = False
    #: ``read`` is the write's own source, a view overlapping the slice written
    #: (``x[..., 1:] = x[..., :-1]``)
    overlap: bool = False


@dataclass(frozen=True, eq=False)
class LeafWrite:
    """An in-place write to a leaf tensor that requires grad, with grad mode on."""

    write: Write
    leaf: str


@dataclass(eq=False)
class ArgWrite:
    """A function writes in place to a tensor it received as an argument."""

    write: Write
    function: str
    param: str
    index: int
    #: why the function is in place by its own declaration (its name ends in ``_``, it takes an
    #: ``inplace`` flag, it runs under no_grad, it initialises tensors), or ""
    contract: str
    evidence: bool  # the argument is known to be a tensor
    qualified: str = ""  # ``Class.method`` for methods, else the function's name
    role: str = ""  # "forward" for an nn.Module's forward
    #: the function returns some other value, so the write is a side effect of computing it
    side_effect: bool = False
    #: the storage groups written (ids), to tell whether the function returns one of them
    groups: frozenset[int] = frozenset()
    under_no_grad: bool = False  # the write sits in a no_grad block
    inplace_guarded: bool = False  # the write sits under ``if inplace:`` (an opt-in flag)


@dataclass(frozen=True, eq=False)
class FunctionWrite:
    """Inside a custom autograd.Function: a write to grad_output, saved tensors or inputs."""

    write: Write
    role: str
    name: str


@dataclass(frozen=True, eq=False)
class GradTarget:
    """autograd.grad/backward(inputs=) names a tensor that was rebound or written in place."""

    node: cst.CSTNode
    stmt: cst.CSTNode | None
    name: str
    how: str
    grad_call: cst.CSTNode
    write: Write | None


@dataclass(frozen=True, eq=False)
class HiddenWriteRead:
    """A `.data`/`.detach()` write to a graph tensor whose new value is used again."""

    write: Write
    read: cst.CSTNode
    name: str
    #: the function whose ``return`` is the read, handing the caller's own tensor back
    returned_by: str = ""


@dataclass(frozen=True, eq=False)
class ClampCall:
    """A ``clamp``/``clip``/``clamp_min`` call (method or ``torch.`` function) with grad on;
    its bounds are left for a rule to read."""

    node: cst.CSTNode
    stmt: cst.CSTNode | None
    text: str
    method: str  # ``clamp``, ``clamp_``, ``clip``, ``clamp_min``, ...
    bounds: tuple[cst.Arg, ...]  # the arguments after the clamped tensor
    #: every clamped value is known to need no gradient (its slope at 0 never matters)
    no_gradient: bool


@dataclass(frozen=True, eq=False)
class SequentialBuilt:
    """An ``nn.Sequential(...)`` whose members the source lists (``spec.elements``), or, for
    one built from a list grown by appends, the pairs of members that may run in a row."""

    node: cst.Call
    spec: ModuleSpec
    pairs: tuple[tuple[ModuleSpec, ModuleSpec], ...] = ()


@dataclass
class Facts:
    """Everything the dataflow pass learnt about one file."""

    saved_overwrites: list[SavedOverwrite] = field(default_factory=list)
    multi_view_writes: list[MultiViewWrite] = field(default_factory=list)
    stale_reads: list[StaleRead] = field(default_factory=list)
    leaf_writes: list[LeafWrite] = field(default_factory=list)
    #: a same-file helper writes in place to the leaf (or leaf view) its caller passed
    leaf_arg_writes: list[LeafWrite] = field(default_factory=list)
    arg_writes: list[ArgWrite] = field(default_factory=list)
    function_writes: list[FunctionWrite] = field(default_factory=list)
    #: the first backward point that keeps its graph (``retain_graph=True``), if any
    retained_at: cst.CSTNode | None = None
    grad_targets: list[GradTarget] = field(default_factory=list)
    hidden_reads: list[HiddenWriteRead] = field(default_factory=list)
    clamp_calls: list[ClampCall] = field(default_factory=list)
    sequentials: list[SequentialBuilt] = field(default_factory=list)
    #: id of an nn.Sequential constructor -> grad modes it was called in (True: enabled)
    sequential_calls: dict[int, set[bool]] = field(default_factory=dict)
    #: id of a write node -> the parameters whose assumed grad makes it a hazard (opt-in)
    assumed_grad: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: function names called somewhere in the file (bare or as self.name)
    called: set[str] = field(default_factory=set)
    #: ``Class.forward`` (and functions) another file of the run calls and judges
    called_elsewhere: set[str] = field(default_factory=set)
    #: (``Class.forward``, parameter) pairs whose writes are judged at same-file module calls
    judged: set[tuple[str, str]] = field(default_factory=set)
    #: (callee, position or keyword) -> whether any same-file call passed a tensor there
    passed_tensor: dict[tuple[str, int | str], bool] = field(default_factory=dict)
    #: (callee, position or keyword) where some same-file call passes a list, tuple or dict
    passed_container: set[tuple[str, int | str]] = field(default_factory=set)
    #: the file's full backward hook registrations and the modules they reach
    backward_hooks: BackwardHooks = field(default_factory=lambda: BackwardHooks([]))
    #: function names passed to torch.utils.checkpoint
    checkpointed: dict[str, cst.CSTNode] = field(default_factory=dict)
