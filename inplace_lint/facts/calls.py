"""Calls into user code: same-file functions and their summaries, module calls, methods of
modules, containers and optimizers. Tensor methods and torch functions go to torch_semantics.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts import ledger
from inplace_lint.facts.backward import wrapped_backward
from inplace_lint.facts.call_shapes import (
    Args,
    element_at,
    sure_tensor_passed,
)
from inplace_lint.facts.classes import defining_class, literal_bool
from inplace_lint.facts.forward_returns import returns_record
from inplace_lint.facts.function_views import FUNCTION_VIEW_PREFIX, returns_view
from inplace_lint.facts.grad_target_params import grad_target_params
from inplace_lint.facts.hooks import HOOK_VIEW
from inplace_lint.facts.model import (
    INSTANCE_ORIGIN,
    MAX_HELD,
    NUMPY_ORIGIN,
    Kind,
    ModuleSpec,
    Value,
    Write,
    new_value,
)
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.op_extras import (
    _RENORM_LOOKUPS,
)
from inplace_lint.facts.ops import (
    METADATA_METHODS,
)
from inplace_lint.facts.passed import _passed_function, _shadowed
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.summaries import Mutation, destination
from inplace_lint.facts.summary_calls import described, names_argument
from inplace_lint.facts.summary_guards import guard_holds
from inplace_lint.facts.syntax import (
    _is_static,
    literal_key,
    short_name,
)
from inplace_lint.facts.vanishing import VANISHING_FUNCTIONS

#: How an in-place module's finding, reported at the call, names the module's construction
#: (a related location; ``tools/heldout.py score --construction`` matches markers there).
CONSTRUCTION_NOTE = "created with inplace=True here"


class Calls(AnalyzerBase):
    """The calls room of the interpreter (see the module docstring)."""

    def _eval_call(self, node: cst.Call) -> list[Value]:
        func = node.func
        qualified = self.imports.qualify(func)
        if qualified is not None and qualified.split(".", 1)[0] == "torch":  # not torchvision
            if qualified in VANISHING_FUNCTIONS and node.args and node.args[0].keyword is None:
                self._vanishing_reads.add(id(node.args[0].value))
            return self._torch_call(qualified, node)
        if qualified is not None and qualified.split(".", 1)[0] == "numpy":
            self._args(node)  # its arguments are read
            return [new_value(Kind.OTHER, qualified, origin=NUMPY_ORIGIN)]
        if qualified == "itertools.chain":  # ``chain(g.parameters(), e.parameters())``
            chained = new_value(Kind.CONTAINER)
            chained.elements = [v for _, _, vs in self._args(node) for v in vs]
            return [chained]
        if isinstance(func, cst.Attribute):
            callee = dotted_name(func)
            receiver_values = self._lookup(callee) if callee else None
            if receiver_values is not None and any(v.kind is Kind.MODULE for v in receiver_values):
                args = self._args(node)
                return self._call_modules(receiver_values, args, node, callee or "")
            held = _passed_function(receiver_values, callee or "", self.functions)
            if held is not None:  # ``self.radial_function(...)`` holding a same-file function
                return self._function_call(held, node)
            return self._held_call(receiver_values, node) or self._method_call(node, func)
        if isinstance(func, cst.Name):
            name = func.value
            values = self._lookup(name)
            passed = _passed_function(values, name, self.functions)
            if passed is not None:  # ``loss_fn(d, g, x)``: the function every caller passes
                name, values = passed, None
            if values is not None and any(v.kind is Kind.MODULE for v in values):
                args = self._args(node)
                return self._call_modules(values, args, node, name)
            done = self._builtin_call(name, values, node) or self._held_call(values, node)
            if done is not None:
                return done
            if name in self.classes:
                return self._construct(name, node)
            cls = self.scope.ctx.cls
            if name == "self" and values is not None and cls is not None and cls.is_module:
                # ``y_hat = self(x)`` in a module's method: its forward's output, a tensor
                args = self._args(node)
                result = self._unknown(inputs=[v for _, _, vs in args for v in vs], sure=True)
                result.grad = 0 if self.scope.no_grad else 2
                return [result]
            called_instance = self._instance_call(values, node)
            if called_instance is not None:
                return called_instance
            modelled = self._guessed_model(values, node, name)
            if modelled is not None:
                return modelled
            if name in self.functions and _shadowed(name, self.scope.env):
                # ``dff = DeepFeatureFactorization(); dff(x)``: not the file's ``def dff``
                args = self._args(node)
                return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
            spec = None if name in self.functions else self.resolver.spec(node)
            args = self._args(node)
            if spec is not None:
                return [new_value(Kind.MODULE, name, module=spec)]
            return self._function_call(name, node, args, values)
        called = self._eval(func)
        called_instance = self._instance_call(called, node)
        if called_instance is not None:  # ``Mitigator(True)(emb, direction)``
            return called_instance
        args = self._args(node)
        if any(v.kind is Kind.MODULE for v in called):  # ``self.blocks[i](x)``
            return self._call_modules(called, args, node, self._text(func))
        return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]

    def _mapped(self, node: cst.Call) -> Value:
        """``map(lambda t: to_heads(t, h), (q, k, v))``: the generator it stands for."""
        lam, iterable = node.args[0].value, node.args[1].value
        target = lam.params.params[0].name  # type: ignore[attr-defined]
        loop = cst.CompFor(target=target, iter=iterable)
        return self._comprehension(cst.GeneratorExp(lam.body, loop))  # type: ignore[attr-defined]

    def _guessed_model(
        self, values: list[Value] | None, node: cst.Call, name: str
    ) -> list[Value] | None:
        """A value that may be a tensor, called with arguments like a function: a model, not
        a tensor (its group joins ``_guessed_groups``: its grad is a guess); a thunk
        (``closure()``) is none. None where the call is not such."""
        if not node.args or values is None:
            return None
        if not any(v.kind is Kind.TENSOR and not v.sure for v in values):
            return None
        for value in values:
            if value.kind is Kind.TENSOR and not value.sure:
                value.kind = Kind.MODULE
                value.module = ModuleSpec(qualname=None, node=None)
                self._guessed_groups.add(value.group.id)
        return self._call_modules(values, self._args(node), node, name)

    def _args(self, node: cst.Call) -> list[tuple[str, cst.Arg, list[Value]]]:
        out: list[tuple[str, cst.Arg, list[Value]]] = []
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else ""
            if keyword == "out":  # ``f(..., out=buf)`` writes buf whole, reading nothing of it
                targets = arg.value.elements if isinstance(arg.value, cst.Tuple) else [arg]
                self._overwriting_reads.update(id(t.value) for t in targets)
            values = self._eval(arg.value)
            if arg.star:
                values = self._flatten(values)
            self._forget_items(values)
            out.append((keyword, arg, values))
        return out

    def _construct(self, name: str, node: cst.Call) -> list[Value]:
        args = self._args(node)
        cls = self.classes[name]
        self._init_writes(name, node, args)
        if cls.is_module:
            spec = ModuleSpec(qualname=None, node=node, user_class=name)
            return [new_value(Kind.MODULE, name, module=spec)]
        if cls.is_optimizer:  # ``SAM(model.parameters(), ...)``: its class says what it steps
            optimizer = new_value(Kind.OPTIMIZER, name)
            optimizer.module = ModuleSpec(qualname=None, node=node, user_class=name)
            optimizer.elements = self._param_groups(args)
            return [optimizer]
        self._record_call(name, node, args)
        return [new_value(Kind.OTHER, name, origin=INSTANCE_ORIGIN)]

    def _init_writes(
        self, name: str, node: cst.Call, args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        """``T(features, adjacency=a)`` runs ``T.__init__`` (or a same-file base's) on what
        the call passes: its summarised writes to its parameters act on the caller's
        tensors, as a method call's do, each a side effect (zuko's ``_check_adjacency``
        stripping the diagonal of the caller's matrix while the transform is built)."""
        definer = defining_class(name, "__init__", self.classes)
        entry = self.summaries.get(f"{definer}.__init__") if definer is not None else None
        if entry is None:
            return
        mutations, exempt = entry
        # it returns nothing, but is called to build the instance, not to change what it is
        # given: its writes are side effects, as a helper's that returns another value
        mutations = [replace(m, side_effect=True) for m in mutations]
        self._note_call_args("__init__", args, f"{definer}.__init__")
        self._apply_mutations(f"{definer}.__init__", node, args, mutations, exempt)

    def _record_call(
        self,
        callee: str,
        node: cst.Call,
        args: list[tuple[str, cst.Arg, list[Value]]],
        method_of: str | None = None,
    ) -> list[Value]:
        """Note a call to a same-file function; apply its writes to the arguments passed.

        Returns the tensors passed where the callee writes and then returns that argument
        (``x = normalize_(x)``): the call's result is the caller's own tensor.
        """
        own = f"{method_of}.{callee}" if method_of is not None else None
        self._note_call_args(callee, args, own or callee)
        self._grad_targets_passed(callee, node, args)
        cls = self.classes.get(method_of) if method_of is not None else None
        if own is not None and cls is not None and callee in cls.methods:  # not a namesake's
            entry = self.summaries.get(own)
        else:
            scoped, entry = self._scoped_summary(callee) if own is None else (False, None)
            entry = entry if scoped else self.summaries.get(callee)
        given_back = [] if entry is None else self._apply_mutations(callee, node, args, *entry)
        if method_of is not None and cls is not None and callee in cls.methods:
            # its backwards over graphs it was handed, before its steps: a step it takes
            # before its own backward is found in its own analysis
            self._replay_method_backwards(method_of, callee, node)
        if own is not None and own in self.step_summaries:
            # ``self.update(loss)``: that class's method, which may step ``self.opt``
            self._replay_steps(own, node, args, on_self=True)
        else:  # a plain helper, or a method inherited from a base class: its parameters only
            self._replay_steps(callee, node, args, on_self=False)
        return given_back

    def _note_call_args(
        self, callee: str, args: list[tuple[str, cst.Arg, list[Value]]], grads_key: str
    ) -> None:
        """What this call passes at each position or keyword: modules, tensors, containers,
        and the strongest grad (summaries of the callee are instantiated with these)."""
        self.facts.called.add(callee)
        # by ``Class.method`` for a method: two classes' methods of one name are two functions
        grads = self.arg_grads.setdefault(grads_key, {})
        keyed: list[tuple[int | str, list[Value]]] = []  # what is passed, by position or keyword
        position = 0
        for keyword, arg, values in args:
            key: int | str = keyword or position
            if not keyword and not arg.star:
                position += 1
            if not arg.star:
                keyed.append((key, values))
                self._note_passed_module(callee, key, values)
                self._note_passed_function(callee, key, arg.value)
                self._note_passed_plain(callee, key, arg.value, values)
                self._note_passed_instance(callee, key, values)
                passed = self.facts.passed_tensor.setdefault((callee, key), False)
                self.facts.passed_tensor[(callee, key)] = passed or any(
                    v.kind is Kind.TENSOR for v in values
                )
                if any(v.kind is Kind.CONTAINER for v in values):
                    self.facts.passed_container.add((callee, key))
            tensors = [v for v in values if v.kind is Kind.TENSOR]
            if tensors:
                sure = self.arg_sure.setdefault(grads_key, {})  # every call: a sure tensor
                sure[key] = sure.get(key, True) and all(v.sure for v in tensors)
            # a list of tensors passed whole (``pad_batch([a, b])``): the callee reads its
            # elements through the parameter, so they give its grad as a tensor would
            tensors += _held_tensors(values)
            if tensors:
                grads[key] = max(grads.get(key, 0), max(v.grad for v in tensors))
                if any(v.grad == 2 and not v.grad_assumed for v in tensors):
                    self.arg_certain.setdefault(grads_key, {})[key] = True
        self._note_passed_optimizers(callee, keyed)

    def _apply_mutations(
        self,
        callee: str,
        node: cst.Call,
        args: list[tuple[str, cst.Arg, list[Value]]],
        mutations: list[Mutation],
        exempt: str,
        strict: bool = False,
    ) -> list[Value]:
        """Apply the callee's summarised argument writes to what this call passes; the
        tensors it hands back written (``x = normalize_(x)``). ``strict``: the callee is known
        by less than its name here (a method of a value of no known kind): it writes only
        what is known to be a tensor."""
        given_back: list[Value] = []
        positional = [(arg, values) for kw, arg, values in args if not kw and not arg.star]
        keywords = {kw: (arg, values) for kw, arg, values in args if kw}
        for mutation in mutations:
            passed = keywords.get(mutation.param)
            if passed is None and mutation.index < len(positional):
                passed = positional[mutation.index]
            if passed is None:
                continue
            arg, values = passed[0], self._written_values(mutation, passed[1])
            if mutation.guard is not None and not guard_holds(keywords, positional, mutation):
                continue
            # another file's helper (project mode) writes only what is known to be a tensor here
            foreign = bool(mutation.origin) and not mutation.through
            loose = not (mutation.augmented or mutation.origin or strict)
            tensors = [v for v in values if v.kind is Kind.TENSOR and (v.sure or loose)]
            if tensors and mutation.returned:  # the argument itself: the list, for an element
                given_back += tensors if mutation.element is None else passed[1]
            if tensors:
                leaves = [v for v in tensors if v.leaf and v.grad == 2]
                write = self._write(
                    tensors,
                    node if foreign else mutation.node,  # another file's write: the call
                    described(mutation, callee),
                    target_node=arg.value,
                    hidden=mutation.bypass,  # ``t.data.masked_fill_()``: no version moves
                    no_grad=mutation.no_grad,
                    via_call=node,
                    callee=callee,
                    param=mutation.param,
                    returned=mutation.returned,
                    # a module's forward returns outputs: writing its input is a surprise;
                    # a helper returning something else may be called for its effect on
                    # a container or array; on a known tensor the write is a side effect,
                    # unless the parameter is named as a destination (``out``, ``buffer``)
                    side_effect=mutation.side_effect
                    and (
                        callee.endswith(".forward")
                        or (
                            all(v.sure for v in tensors)
                            and not all(v.blank for v in tensors)  # a buffer the helper fills
                            and not destination(mutation.param)
                        )
                    ),
                    stmt=None if foreign else mutation.stmt,
                    copies_itself=mutation.copies_itself,
                    # another file's helper: judged only where a caller here is harmed
                    nested=(bool(mutation.through) and mutation.through != callee)
                    or bool(mutation.origin),
                )
                if (
                    leaves
                    and write is not None
                    and not (exempt or mutation.bypass or mutation.no_grad or self.scope.no_grad)
                ):
                    # torch raises at the call: a leaf that requires grad written in place
                    self.facts.leaf_arg_writes.append(ev.LeafWrite(write, self._text(arg.value)))
        return given_back

    def _written_values(self, mutation: Mutation, values: list[Value]) -> list[Value]:
        """What a summarised write reaches of the values passed for its parameter."""
        if mutation.elementwise:  # ``sgd_(model.parameters())`` writes each parameter
            return self._iterate(values)
        if mutation.element is not None:  # ``outputs[0].masked_fill_()``: that element
            kept = [v for v in values if v.kind is not Kind.CONTAINER]
            return kept if mutation.fresh_element else kept + element_at(values, mutation.element)
        if mutation.key is not None:  # ``batch["ego"].div_()``: that entry
            key = mutation.key
            held = [e for v in values if v.kind is Kind.CONTAINER for e in v.items.get(key, ())]
            # a value taken for a tensor is written too: a later read of it whole (``model(
            # batch)``) may read the entry
            whole = [v for v in values if v.kind is not Kind.CONTAINER]
            for value in values:  # a mapping passed whole, its entry not read here yet: the
                mapping = value.kind is Kind.TENSOR or (  # entry a later ``batch["ego"]`` reads
                    value.kind is Kind.CONTAINER and not value.literal_container
                )
                if mapping and key not in value.items:  # made, not read: its kind stays
                    value.items[key] = [self._unknown(inputs=[value])]
                    held += value.items[key]
            return [*whole, *held]
        return values

    def _metadata_call(
        self, node: cst.Call, func: cst.Attribute, method: str
    ) -> list[Value] | None:
        """``x.backward()``, ``x.size()``, ``ctx.save_for_backward(a)``: no tensor computed;
        ``accelerator.backward(loss)`` / ``self.manual_backward(loss)``: a backward of the
        tensor passed (see ``_wrapped_backward``)."""
        if method in METADATA_METHODS or method == "manual_backward":
            with self._meta:
                receiver = self._eval(func.value)
            if self._defines(receiver, func.value, method):
                return None  # ``model.backward(d_loss, g_loss)``: the class's own method
            args = self._args(node)
            wrapped = wrapped_backward(method, receiver, args)
            if wrapped is not None:
                self._backward_call(node, wrapped, args)
            elif method == "backward":
                for value in receiver:  # only a tensor has ``backward()``
                    value.sure = value.sure or value.kind is Kind.TENSOR
                self._backward_call(node, receiver, args)
            return [new_value(Kind.OTHER)]
        if method == "save_for_backward" and self.scope.ctx.role == "fn_forward":
            return self._save_for_backward_call(node, func)
        return None

    def _static_call(self, node: cst.Call, func: cst.Attribute, method: str) -> list[Value] | None:
        """A same-file class's static method called on the class (``kernel.backward(g, p)``,
        not a tensor's ``backward``): its argument writes apply here."""
        owner = func.value.value if isinstance(func.value, cst.Name) else ""
        cls = self.classes.get(owner)
        defined = cls.methods.get(method) if cls is not None else None
        if defined is None or not _is_static(defined) or self._lookup(owner) is not None:
            return None
        args = self._args(node)
        key = f"{owner}.{method}"
        self._note_call_args(key, args, key)
        entry = self.summaries.get(key)
        given_back = self._apply_mutations(key, node, args, *entry) if entry else []
        return given_back or [self._unknown(inputs=[v for _, _, vs in args for v in vs])]

    def _save_for_backward_call(self, node: cst.Call, func: cst.Attribute) -> list[Value]:
        """``ctx.save_for_backward(a, b)`` in a Function's forward (``function_saves``)."""
        self._eval(func.value)
        self._note_save_for_backward(self._args(node))
        return [new_value(Kind.OTHER)]

    def _grad_targets_passed(
        self, callee: str, node: cst.Call, args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        """``jacobian(y, h)`` where the same-file ``jacobian`` differentiates against its
        second parameter: ``h`` is a grad target here, as if passed to autograd.grad."""
        func = self.functions.get(callee)
        if func is None:
            return
        wanted = self._grad_params.get(id(func))
        if wanted is None:
            wanted = self._grad_params[id(func)] = grad_target_params(func, self.imports)
        if not wanted:
            return
        positional = [arg for kw, arg, _ in args if not kw and not arg.star]
        keywords = {kw: arg for kw, arg, _ in args if kw}
        for name, index in wanted.items():
            arg = keywords.get(name) or (positional[index] if index < len(positional) else None)
            if arg is not None:
                self._check_grad_targets(node, arg.value, None)

    def _own_method(self, node: cst.Call, method: str) -> list[Value]:
        """``self.method(...)``: what the same-file method gives (its summary, its inlined
        body, the saves it carries); a method the module's class does not define is a
        submodule from another file (``self.input_linear(x)``): a tensor for a tensor."""
        args = self._args(node)
        cls = self.scope.ctx.cls
        given_back = self._record_call(method, node, args, cls.name if cls else None)
        if cls is not None:  # ``self.enqueue(k)`` writes ``self.queue``
            self._replay_attribute_writes(cls.name, method)
        if given_back:
            return given_back
        inlined = self._inline_method(method, args)
        if inlined is not None:
            return inlined
        inputs = [v for _, _, vs in args for v in vs]
        # ``self.calc_loss(batch)``: computed through ``self``'s modules
        through = self._method_result(cls.name, method, None, inputs) if cls else None
        sure = cls is not None and cls.is_module and method not in cls.methods
        return [through or self._unknown(inputs=inputs, sure=sure and sure_tensor_passed(args))]

    def _method_call(self, node: cst.Call, func: cst.Attribute) -> list[Value]:
        method = func.attr.value
        scope = self.scope
        early = self._static_call(node, func, method) or self._metadata_call(node, func, method)
        if early is not None:
            return early
        self._note_reader(method, func.value, node)
        receiver = self._not_tensors(method, self._eval(func.value), node)
        self._forget_items(receiver)  # ``xs.insert(0, v)``, ``xs.pop()``: positions move
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return self._own_method(node, method)
        if isinstance(func.value, cst.Name) and func.value.value == "ctx":
            args = self._args(node)
            return [new_value(Kind.OTHER)]
        args = self._args(node)
        if receiver and all(v.origin == NUMPY_ORIGIN for v in receiver):
            return [new_value(Kind.OTHER, method, origin=NUMPY_ORIGIN)]  # ``a.astype(np.int8)``
        kinds = {v.kind for v in receiver}
        if method == "apply" and isinstance(func.value, cst.Name):
            applied = self._function_apply(func.value.value, args)
            if applied is not None:
                return applied
        if self._step_call(node, func, receiver, args):
            return [new_value(Kind.OTHER)]
        if method in ("parameters", "named_parameters") and receiver:
            return [self._parameters_of(receiver, method)]
        state = self._state_method(method, receiver, args, node, func)
        if state is not None:
            return state
        if Kind.MODULE in kinds:
            modules = [v for v in receiver if v.kind is Kind.MODULE]
            if method == "forward":
                return self._call_modules(modules, args, node, self._text(func.value))
            if method == "requires_grad_":  # ``embedding.requires_grad_(False)``: frozen
                flag = literal_bool(args[0][1].value) if args else True
                for module in modules if flag is not None else ():
                    module.group.frozen = not flag
                return modules
            if method in ("to", "cuda", "cpu", "train", "eval", "float", "double", "half"):
                return modules
            inputs = [v for _, _, vs in args for v in vs]
            called = [self._module_attribute(v, method) for v in modules]
            submodules = [v for v in called if v.kind is Kind.MODULE]
            if submodules:  # ``model.discriminator(x)``
                return self._call_modules(submodules, args, node, self._text(func))
            given_back = self._instance_method_writes(modules, method, node, args)
            through = self._module_method(modules, method, inputs)
            inlined = None if given_back else self._inline_module_method(modules, method, args)
            if inlined is not None and len(inlined) == 1 and inlined[0].kind is Kind.TENSOR:
                if through is not None:  # the module parameters' saves it carries too
                    inlined[0].hist |= through.hist
                through = inlined[0]
            result = (given_back or [None])[0] or through or self._unknown(inputs=inputs)
            self._method_output_saved(modules, method, result, node)
            return [result]
        if Kind.CONTAINER in kinds:
            containers = [v for v in receiver if v.kind is Kind.CONTAINER]
            if method in ("append", "extend", "insert", "add"):
                self._extend_containers(containers, [values for _, _, values in args])
                return [new_value(Kind.OTHER)]
            key = literal_key(node.args[0].value) if node.args else None
            if method in ("pop", "get") and key is not None:  # that entry, not every one
                return [e for c in containers for e in c.items.get(key, ())] or [self._unknown()]
            if method in ("pop", "get", "popleft"):
                return [e for c in containers for e in c.elements] or [self._unknown()]
            if method in ("values", "items", "copy"):
                return containers
        owned = self._owned_method_writes(receiver, method, node, args)
        if owned is not None:
            return owned
        tensors = [v for v in receiver if v.kind is Kind.TENSOR]
        if not tensors:
            return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
        return self._tensor_method(node, func, method, tensors, args, scope)

    def _extend_containers(self, containers: list[Value], added: list[list[Value]]) -> None:
        """``rows.append(x)``, ``rows += [x]``: each container, in place, also holds the
        (flattened) values added."""
        now = self._next()
        for container in containers:
            for values in added:
                for element in self._flatten(values):
                    if len(container.elements) >= MAX_HELD:
                        break  # widened, as a subscript store is
                    container.elements.append(element)
                    # the first time counts: a loop appending the tensor it then
                    # writes in place keeps one tensor, changed, in every slot
                    container.added.setdefault(element.id, now)
                    if self._arm_appends:
                        self._arm_appends[-1].append((container, element))

    def _function_apply(self, name: str, args: Args) -> list[Value] | None:
        """``F.apply(x)`` of a same-file ``autograd.Function`` whose forward returns a view:
        its output, which torch refuses to let anyone write in place (``function_views``);
        None for any other call, which keeps the general path."""
        cls = self.classes.get(name)
        forward = cls.methods.get("forward") if cls is not None and cls.is_function else None
        if forward is None:
            return None
        if name not in self._function_views:
            self._function_views[name] = returns_view(forward, self.table.view_methods)
        if not self._function_views[name]:
            return None
        inputs = [v for _, _, vs in args for v in vs]
        result = self._unknown(inputs=inputs, sure=True)
        result.multi_view = FUNCTION_VIEW_PREFIX + name
        return [result]

    def _parameters_of(self, receiver: list[Value], method: str) -> Value:
        """``m.parameters()``: only a module has parameters, so a value that might have been
        a tensor is a module after all."""
        for value in receiver:
            if value.kind is Kind.TENSOR and not value.sure:
                value.kind = Kind.MODULE
                value.module = ModuleSpec(qualname=None, node=None)
        named = "named" if method == "named_parameters" else ""
        return Value(kind=Kind.PARAM_ITER, group=receiver[0].group, origin=named)

    def _call_modules(
        self,
        modules: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
        node: cst.Call,
        callee: str,
    ) -> list[Value]:
        inputs = [v for kw, _, vs in args if not kw for v in vs]
        first = args[0][2] if args and not args[0][0] else []
        results: list[Value] = []
        for module in modules:
            if module.kind is not Kind.MODULE or module.module is None:
                continue
            self.scope.callables[callee] = module.group
            spec = module.module
            for name in spec.classes:  # their forward's argument writes
                key = f"{name}.forward"
                mutations, _ = self.summaries.get(key, ((), ""))
                # judged here where this call passes that argument by name or position, or
                # shows it passes none (``model(tokens)``: ``inputs_embeds`` keeps its
                # default); ``self.bert(**inputs)`` may pass it where no summary can follow
                starred = any(arg.star for _, arg, _ in args)
                self.facts.judged.update(
                    (key, m.param) for m in mutations if names_argument(args, m) or not starred
                )
                self._record_call(key, node, args)
            produced = self._apply_module(spec, module, first, inputs, node, callee)
            if module.group.id in self._guessed_groups and not sure_tensor_passed(args):
                for value in produced:  # ``ratio(steps / world)``: may give a number
                    value.sure = False
            self._forward_argument_saves(spec, args, node, produced)
            if spec.user_class is not None and returns_record(self._forward_of(spec.user_class)):
                # a tuple or ModelOutput: reading one field is not reading the others
                record = self._forward_record(spec.user_class, module, produced, args, node)
                results.append(record)
                continue
            results += produced
        return results or [self._unknown(inputs=inputs)]

    def _chain_save(self, element: ModuleSpec, current: list[Value], node: cst.Call) -> None:
        """The save an in-place member of a ``Sequential`` makes of the value it writes."""
        if element.saves_result and not self.scope.no_grad and self._grad_of(current) == 2:
            kind = short_name(element.qualname) if element.qualname else "module"
            for value in current:
                self._save(value, kind, node, "result", current)

    def _apply_module(
        self,
        spec: ModuleSpec,
        owner: Value,
        first: list[Value],
        inputs: list[Value],
        node: cst.Call,
        callee: str,
    ) -> list[Value]:
        tensors = [v for v in first if v.kind is Kind.TENSOR]
        if spec.elements is not None and spec.node is not None:
            modes = self.sequential_calls.setdefault(id(spec.node), set())
            modes.add(not self.scope.no_grad)
        if spec.elements is not None:
            current = tensors
            for element in spec.elements:
                if current is not tensors and element.inplace:
                    # writes a fresh intermediate (the chain check reports a write there),
                    # but what it saves is saved all the same: ``ReLU(inplace=True)`` keeps
                    # its result, which the caller may write in place after the call
                    self._chain_save(element, current, node)
                    continue
                current = self._apply_module(element, owner, current, current, node, callee)
            return current
        if spec.qualname is not None and spec.qualname.startswith("torch.nn."):
            for value in tensors:
                value.sure = True  # a torch module's input is a tensor (``x += y`` is in place)
                value.group.tensor = True  # and so is the base of a view passed
        if spec.is_view:
            return tensors or [self._unknown(inputs=inputs)]
        self._use(inputs)
        lead = next((m for m in spec.leads if m.inplace), None) if spec.elements is None else None
        if lead is not None and tensors:
            # ``nn.Sequential(*rep)`` whose grown list may start with ``nn.ReLU(inplace=True)``
            self._inplace_module(lead, tensors, inputs, node, callee)
        if spec.qualname in _RENORM_LOOKUPS and isinstance(spec.node, cst.Call):
            self._renorm_lookup(spec.node, spec.qualname, [owner], node, callee, f"{callee}.weight")
        if spec.inplace and tensors:
            self._inplace_module(spec, tensors, inputs, node, callee)
            return tensors
        result = self._unknown(inputs=inputs, sure=True)
        result.grad = (
            0
            if self.scope.no_grad
            else (2 if spec.has_parameters else self._grad_of(inputs, default=1))
        )
        if self.scope.no_grad or result.grad < 2:
            return [result]
        self._hooked_result(spec, result)
        label = short_name(spec.qualname) if spec.qualname else callee
        if spec.has_parameters and spec.saves_parameters:  # before the outputs are made
            record = ledger.save(
                owner.group,
                f"the forward pass of `{callee}`",
                node,
                "parameters",
                f"{callee}'s parameters",
                tuple(self._path),
            )
            result.hist.add(record)
        if spec.saves_input:
            for value in tensors:
                others = [t for t in tensors if t is not value]
                own = not spec.has_parameters and self._grad_of(others) < 2
                self._save(value, label, node, "input", [result], own=own)
        if spec.saved_outputs:  # ``out, (h, c) = lstm(x)``: a tuple, ``out`` saved
            return [self._saved_tuple(spec, result, label, node)]
        self._module_result_saves(spec, result, tensors, label, node)
        return [result]

    def _module_result_saves(
        self, spec: ModuleSpec, result: Value, tensors: list[Value], label: str, node: cst.Call
    ) -> None:
        """What a module call keeps of its output (the module itself, the last member of a
        grown Sequential, or a same-file forward) and of its input (a same-file forward)."""
        if spec.saves_result:
            self._save(result, label, node, "result", [result])
        elif spec.tails and all(t.saves_result for t in spec.tails):
            # ``nn.Sequential(*layers)`` whose grown list always ends in a member that keeps
            # its output (``layers.insert(1, bn)`` before ``nn.ReLU(inplace=True)``)
            tail = spec.tails[0]
            self._save(result, short_name(tail.qualname or "module"), node, "result", [result])
        saved_by = [(self.method_saves_output.get((c, "forward")), c) for c in spec.classes]
        configured = self._configured_output_save(spec, node)
        if configured or (saved_by and all(op for op, _ in saved_by)):  # every class saves it
            op = f"{configured or saved_by[0][0]} in {saved_by[0][1]}.forward"
            self._save(result, op, node, "result", [result])
        saved_in = [(self.forward_saves_input.get(c), c) for c in spec.classes]
        if saved_in and all(op for op, _ in saved_in):  # its first layer keeps its input
            own = any(c in self.own_saves for c in spec.classes)
            if own and self._grad_of(tensors) == 0:
                return  # a layer without parameters (``ReflectionPad2d``) first: no graph
            op = f"{saved_in[0][0]} in {saved_in[0][1]}.forward"
            for value in tensors:
                self._save(value, op, node, "input", [result], own=own)

    def _saved_tuple(self, spec: ModuleSpec, result: Value, label: str, node: cst.Call) -> Value:
        """A torch module's tuple result: each output depends on what ``result`` does, and
        those at ``spec.saved_outputs`` were saved by the module (``nn.LSTM``'s output)."""
        record = new_value(Kind.CONTAINER, literal_container=True)
        for position in range(spec.outputs or max(spec.saved_outputs) + 2):
            element = self._unknown(inputs=[result], sure=True)
            element.grad = result.grad
            if position in spec.device_outputs:  # a cuDNN or fused kernel's save
                device = spec.device_saves.upper()
                self._save(element, f"{label} on {device}", node, "result", [element])
            elif position in spec.saved_outputs:
                self._save(element, label, node, "result", [element])
            record.elements.append(element)
            record.slots[element.id] = position  # ``lstm(x)[1]`` is ``(h, c)``, not ``out``
        return record

    def _inplace_module(
        self,
        spec: ModuleSpec,
        tensors: list[Value],
        inputs: list[Value],
        node: cst.Call,
        callee: str,
    ) -> None:
        """An in-place module called on ``tensors``: the write, and what the module saves."""
        kind = short_name(spec.qualname) if spec.qualname else "module"
        related: tuple[tuple[cst.CSTNode, str], ...] = ()
        if spec.node is not None:
            related = ((spec.node, f"{kind} {CONSTRUCTION_NOTE}"),)
        write = self._write(
            tensors,
            node,
            f"`{callee}` ({kind}(inplace=True))",
            extra=[v for v in inputs if v not in tensors],
            target_node=node.args[0].value if node.args else node,
            related=related,
        )
        if write is None:
            return
        self._inplace_results[id(node)] = write
        self._hooked_write(spec, write, tensors)
        if spec.saves_result and self._grad_of(tensors) == 2:
            for value in tensors:
                self._save(value, kind, node, "result", tensors)

    def _hooked_result(self, spec: ModuleSpec, result: Value) -> None:
        """A module a full backward hook reaches returns its output through
        ``BackwardHookFunction``: a view autograd refuses to let anyone write in place."""
        if self.backward_hooks.covering(spec) is not None:
            result.multi_view = HOOK_VIEW

    def _hooked_write(self, spec: ModuleSpec, write: Write, tensors: list[Value]) -> None:
        """An in-place module that carries a full backward hook writes the view the hook
        made of its input (when that input requires grad): autograd refuses it at once."""
        if self.scope.no_grad or self._grad_of(tensors) != 2:
            return
        if self.backward_hooks.covering(spec) is not None:
            self.facts.multi_view_writes.append(ev.MultiViewWrite(write, HOOK_VIEW))

    def _checkpoint_call(self, node: cst.Call) -> list[Value]:
        if node.args:
            target = dotted_name(node.args[0].value)
            if target is not None:
                self.facts.checkpointed.setdefault(target.split(".")[-1], node)
        args = self._args(node)
        for value in args[0][2] if args else []:  # ``checkpoint(block, h)`` runs block.forward
            spec = value.module if value.kind is Kind.MODULE else None
            for name in spec.classes if spec is not None else ():
                self.facts.checkpointed.setdefault(f"{name}.forward", node)
        return [self._unknown(inputs=[v for _, _, vs in args[1:] for v in vs], sure=True)]


def _held_tensors(values: list[Value], depth: int = 2) -> list[Value]:
    """The tensors that containers among ``values`` are known to hold, in containers they
    hold too (a list of dicts of tensors), ``depth`` levels down."""
    found: list[Value] = []
    for value in values:
        if value.kind is not Kind.CONTAINER:
            continue
        held = [*value.elements, *(x for item in value.items.values() for x in item)]
        found += [e for e in held if e.kind is Kind.TENSOR]
        if depth > 1:
            found += _held_tensors(held, depth - 1)
    return found
