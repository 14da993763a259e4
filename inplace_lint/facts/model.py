"""The abstract values the dataflow pass tracks: values, writes and module specs.

Storage groups and save records belong to the ledger (:mod:`inplace_lint.facts.ledger`) and
are re-exported here for the rooms that build values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import libcst as cst

from inplace_lint.facts.ledger import Group, Path, SaveRecord, compatible, next_id

__all__ = [
    "Group",
    "Kind",
    "ModuleSpec",
    "Path",
    "SaveRecord",
    "Value",
    "Write",
    "compatible",
    "new_value",
    "slot_positions",
]


class Kind(Enum):
    """What sort of Python object a value stands for."""

    TENSOR = "tensor"
    MODULE = "module"
    OPTIMIZER = "optimizer"
    CONTAINER = "container"
    PARAM_ITER = "param_iter"
    OTHER = "other"


@dataclass(eq=False)
class Write:
    """One in-place write to a storage group."""

    node: cst.CSTNode
    stmt: cst.CSTNode | None
    what: str  # how the write reads in a message, e.g. "`x.mul_()`"
    target: str  # the written tensor's source text
    seq: int
    hidden: bool = False  # through `.data`: autograd's version counter does not move
    via_detach: bool = False
    no_grad: bool = False
    elsewhere: bool = False  # the in-place result is used as if it were a new tensor
    name: str | None = None  # the name (or dotted path) the write went through
    via_call: cst.CSTNode | None = None  # a same-file call whose callee performs this write
    callee: str = ""
    #: the callee reaches the write through a further call (``forward`` -> ``merge`` ->
    #: the write): a summary through calls
    nested: bool = False
    param: str = ""
    path: tuple[tuple[int, int], ...] = ()  # (branch, arm) pairs the write sits in
    #: the values whose soft aliases (``x.float()``) the write went through, by id
    soft_through: frozenset[int] = frozenset()
    shape_only: bool = False  # ``squeeze_()`` and friends: new shape, same values
    #: made in a function named like a state update (``heuristics.state_update_name``) or in
    #: an optimizer class: its ``.data`` writes are meant to bypass autograd
    in_state_update: bool = False
    related: tuple[tuple[cst.CSTNode, str], ...] = ()
    #: a parameter update: an optimizer step, or a no-grad write to a leaf that requires grad
    update: bool = False

    @property
    def rebinds(self) -> frozenset[str]:
        """Names this write's statement binds to its in-place result: ``x += y``,
        ``x = x.mul_(2)``, ``x = relu_inplace(x)``."""
        small = self.small_statement()
        if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            return frozenset({small.target.value})
        if isinstance(self.stmt, cst.SimpleStatementLine):
            for small in self.stmt.body:
                if isinstance(small, cst.Assign) and small.value is self.node:
                    return frozenset(
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    )
        return frozenset()

    def small_statement(self) -> cst.BaseSmallStatement | None:
        """The simple statement of ``stmt`` that makes this write: the write itself
        (``x += y``) or the assignment whose target it is (``x[i] = v``, ``x[i] += v``)."""
        if not isinstance(self.stmt, cst.SimpleStatementLine):
            return None
        for small in self.stmt.body:
            if small is self.node:
                return small
            if isinstance(small, cst.AugAssign) and small.target is self.node:
                return small
            if isinstance(small, cst.Assign) and any(t.target is self.node for t in small.targets):
                return small
        return None


@dataclass(eq=False)
class ModuleSpec:
    """A module object as far as the source shows it."""

    qualname: str | None  # "torch.nn.ReLU", or None for user/unknown modules
    node: cst.CSTNode | None
    inplace: bool = False
    elements: tuple[ModuleSpec, ...] | None = None  # for nn.Sequential with literal members
    saves_input: bool = False
    saves_result: bool = False
    has_parameters: bool = True
    #: its forward's graph keeps its parameters (no for ``nn.Embedding``)
    saves_parameters: bool = True
    #: a torch module: the names of its own parameters, as the op table records them
    parameters: tuple[str, ...] = ()
    is_view: bool = False  # Flatten, Identity and the like return their input or a view
    user_class: str | None = None  # a module class defined in the same file
    #: same-file module classes this attribute may hold (assigned on different paths)
    candidates: tuple[str, ...] = ()
    #: for nn.ModuleList/ModuleDict: the same-file module classes of its members
    members: tuple[str, ...] = ()
    #: for nn.ModuleList: the members whose constructors the source shows (torch modules,
    #: same-file classes, nested lists), and whether they are all of them, in order (a
    #: literal display: ``for conv, bn, act in self.layers`` unpacks them by position)
    member_specs: tuple[ModuleSpec, ...] = ()
    positional: bool = False
    #: for an nn.Sequential over a list grown by appends: the members that may run first
    leads: tuple[ModuleSpec, ...] = ()
    #: and the members that may run last
    tails: tuple[ModuleSpec, ...] = ()
    #: a torch module returning a tuple (``nn.LSTM``): the positions of the outputs it saved
    saved_outputs: tuple[int, ...] = ()
    outputs: int = 0  # the length of that tuple, when the table knows it
    #: the outputs of ``saved_outputs`` saved only on another device, and that device's name
    device_outputs: tuple[int, ...] = ()
    device_saves: str = ""
    #: where a later ``m.inplace = True`` made it in place (``flag_loops``), if not built so
    inplace_at: cst.CSTNode | None = None
    #: the constructor calls of the same-file instances it stands for, beyond ``node`` (the
    #: members of an nn.ModuleList of one class)
    instances: tuple[cst.CSTNode, ...] = ()

    @property
    def classes(self) -> tuple[str, ...]:
        """The same-file module classes this module may be an instance of."""
        return tuple(c for c in (self.user_class, *self.candidates) if c)


#: the origin of a tensor a custom Function's forward made, saved and gave nobody else
#: (``function_saves``): only a second backward over a retained graph sees it written
OWNED = "owned_saved"
#: an instance of a same-file plain class, built by its constructor (``Mitigator(True)``)
INSTANCE_ORIGIN = "instance"
#: the origin of a tensor taken from an argument of unknown kind (a list of tensors, most
#: often) whose callers pass tensors that require grad: unknown but for its grad
ELEMENT_ORIGIN = "element"
#: the origin of what a numpy function or a method of its result gives: an array or a
#: number, never a tensor
NUMPY_ORIGIN = "numpy"

#: the role of a mark that a function's parameter leaves in the history of what is computed
#: from it: no save, only a trace of which parameters a result came from
FLOW = "flow"


@dataclass(eq=False)
class Value:
    """One abstract Python value."""

    kind: Kind
    group: Group
    sure: bool = True  # for tensors: known to be a tensor, not just possibly one
    grad: int = 1  # requires grad: 0 no, 1 maybe, 2 yes
    #: grad 2 only by assumption: a module method's own tensor parameter, which no call in
    #: the file passes a tensor known to require grad (a graph operator or a mask passed
    #: beside the features is as likely as an activation); not enough to say that an op
    #: keeps its other operand for this one's gradient
    grad_assumed: bool = False
    leaf: bool = False
    #: "arg", "grad_output", "saved", OWNED, "fn_input", "def", INSTANCE_ORIGIN, ELEMENT_ORIGIN,
    #: NUMPY_ORIGIN or ""
    origin: str = ""
    arg_name: str = ""
    via_data: bool = False
    via_detach: bool = False
    hist: set[SaveRecord] = field(default_factory=set)
    elements: list[Value] = field(default_factory=list)
    items: dict[str, list[Value]] = field(default_factory=dict)  # string-keyed entries
    #: for a container whose elements are unknown (a parameter): the grad of the tensors
    #: every call puts in it (``pad_batch([a, b])``), which each element read carries
    element_grad: int = 1
    module: ModuleSpec | None = None
    first_use: int | None = None
    literal_container: bool = False
    #: a Python list (a display or a list comprehension): as an index, advanced indexing
    py_list: bool = False
    added: dict[int, int] = field(default_factory=dict)  # element id -> when it was stored
    #: element id -> the constant position a subscript store put it at (``xs[1] = y``)
    slots: dict[int, int] = field(default_factory=dict)
    view: bool = False  # made by indexing or a view op from another value
    #: one of the views ``unbind``/``chunk``/``split`` return, or a view of one: autograd
    #: refuses to write it in place while its base requires grad
    multi_view: str = ""  # the op, e.g. ``chunk``
    #: the whole result of such an op (the tuple of its views, not one of them)
    several: bool = False
    soft_of: int | None = None  # may be the same object as this value (x.float(), x.to())
    #: the dtype's category where known: "float", "int" or "bool" (``a / b`` is "float")
    dtype: str = ""
    #: the index texts of the basic subscript that made this view of a value that is no
    #: view itself (``e[:, 0]``: ``(":", "0")``), to tell views of one base apart
    index: tuple[str, ...] | None = None
    blank: bool = False  # made by torch.zeros/empty/full/...: a buffer meant to be filled
    #: one iteration's parameter of ``for p in module.parameters()``: stands for each in turn
    each_param: bool = False
    #: a container ``module.state_dict()`` made: the module's own tensors, not copies
    snapshot: bool = False
    #: differentiating against this tensor is wrong: (the in-place write, why), set on what a
    #: forward returned after rebinding it to an in-place result
    grad_hazard: tuple[Write, str] | None = None
    id: int = field(default_factory=next_id)

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def sure_tensor(self) -> bool:
        return self.kind is Kind.TENSOR and self.sure

    @property
    def saved(self) -> bool:
        """Some op saved a tensor this value's graph depends on (flow marks aside)."""
        return any(r.role != FLOW for r in self.hist)


def slot_positions(record: Value, size: int) -> list[list[Value]] | None:
    """The values at each of a tuple's ``size`` positions, from the ``slots`` that give each
    element's position (a display whose positions hold several values, ``_eval_display``;
    a helper's result, ``inline._returned``); None when an element has no slot in range."""
    positions: list[list[Value]] = [[] for _ in range(size)]
    for value in record.elements:
        slot = record.slots.get(value.id)
        if slot is None or slot >= size:
            return None
        positions[slot].append(value)
    return positions


def held_elements(
    values: list[Value], position: int | None, key: str | None, literal: bool
) -> list[tuple[int, int]]:
    """What a read of containers holds, as (group, when it was put there): of a literal
    display (``literal``: not read at an unknown index), ``x[1]`` the one stored at that
    position (or any of unknown place), all for another read; ``batch["x"]`` the item of
    that key."""
    return [
        (e.group.id, v.added.get(e.id, 0))
        for v in values
        if v.kind is Kind.CONTAINER
        for e in (
            v.items.get(key, ())
            if key is not None
            else at_position(v, v.elements, position)
            if v.literal_container and literal
            else ()
        )
    ]


def instance_class(values: list[Value] | None) -> str | None:
    """The same-file plain class whose constructor built every one of ``values`` (values of
    origin ``INSTANCE_ORIGIN``, named by their class), when it is one; else None."""
    classes = {v.group.name for v in values or () if v.origin == INSTANCE_ORIGIN}
    if len(classes) != 1 or any(v.origin != INSTANCE_ORIGIN for v in values or ()):
        return None
    return classes.pop()


def at_position(container: Value, elements: list[Value], index: int | None) -> list[Value]:
    """``record[1]``: of a container's elements, those that may sit at the constant ``index``:
    the one stored there (a display's, a module's tuple result's) and any of unknown place
    (appended); all of them for another index."""
    if index is None or index < 0 or not container.slots:
        return elements
    return [v for v in elements if container.slots.get(v.id, index) == index] or elements


#: the most values a container is taken to hold: beyond it, what a loop stores into a
#: container it reads from is not added (a widening, so that nested loops stay linear)
MAX_HELD = 64


def new_value(kind: Kind, name: str = "", **kwargs: object) -> Value:
    """A value with a fresh storage group of its own."""
    return Value(kind=kind, group=Group(name=name), **kwargs)  # type: ignore[arg-type]
