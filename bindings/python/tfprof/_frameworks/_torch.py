"""PyTorch, through its public hooks: a step per optimizer step, DataLoader waits as input waits,
module forward passes, backward passes (the pass, and each weighted layer's own backward op),
optimizer steps and ``record_function`` ranges as spans.

Steps: step N opens at the first DataLoader fetch (or, without a DataLoader, the first forward
pass of a model in training mode) after step N-1 ended, and ends when the first optimizer the
program stepped finishes its ``step()``: one step per training iteration, whatever the number of
optimizers, and the wait for the batch inside the step whose batch it is. A program that marks
steps itself (``tfprof.step``, or ``torch.profiler.profile.step()``'s ``ProfilerStep#N``) keeps its
own: the optimizer no longer marks any. Span names follow torch.profiler's where it has one
(``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``, ``Optimizer.step#SGD.step``), so
tfprof's summary and the tools built for PyTorch traces read them as they read its.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from tfprof import _native
from tfprof._frameworks import NO_SPAN, Integration, Settings, program_steps_listeners
from tfprof._frameworks._steps import StepMarks
from tfprof._frameworks._torch_ops import TorchOps

STEP_MARKERS_OF_PROFILER = "ProfilerStep#"
OPTIMIZER_STEP_RANGE = "Optimizer.step#"


class TorchIntegration(Integration):
    def __init__(self) -> None:
        self._handles: List[Any] = []
        self._patches: List[Tuple[object, str, object]] = []
        self._local = threading.local()
        # Span names of modules by id(), an entry dropped when its module dies (a dict by id is
        # several times faster to look up than a WeakKeyDictionary, and this runs every call).
        self._names: Dict[int, str] = {}
        self._depth_limit = 0
        # The global forward pre-hook that finds the models (see _adopt), until the first step ends.
        self._adopting: Any = None
        self._adopted: Set[int] = set()  # id() of the models found
        self._torch: Any = None
        self._ops: Optional[TorchOps] = None  # TFPROF_TORCH_OPS=on: torch.profiler's aten ops
        # Steps: marked by the primary optimizer ("optimizer"), torch.profiler's step() ("profiler")
        # or the program (see the steps section).
        self._steps = StepMarks("optimizer")
        self._primary_optimizer: Optional["weakref.ref[Any]"] = None

    # ---- install / uninstall --------------------------------------------------------------------

    def install(self, torch: Any, settings: Settings) -> None:
        self._torch = torch
        self._depth_limit = settings.module_depth
        optimizer = importlib.import_module("torch.optim.optimizer")
        self._handles.append(optimizer.register_optimizer_step_pre_hook(self._optimizer_pre))
        self._handles.append(optimizer.register_optimizer_step_post_hook(self._optimizer_post))
        if self._depth_limit > 0:
            module = importlib.import_module("torch.nn.modules.module")
            self._adopting = module.register_module_forward_pre_hook(self._adopt)
        dataloader = importlib.import_module("torch.utils.data.dataloader")
        self._wrap(dataloader._BaseDataLoaderIter, "__next__", self._next_batch)
        self._wrap(torch.autograd, "backward", self._backward)
        autograd_profiler = importlib.import_module("torch.autograd.profiler")
        record_function = autograd_profiler.record_function
        self._wrap(record_function, "__enter__", self._record_function_enter)
        self._wrap(record_function, "__exit__", self._record_function_exit)
        profiler = importlib.import_module("torch.profiler.profiler")
        self._wrap(profiler.profile, "start", self._profiler_start)
        self._wrap(profiler.profile, "step", self._profiler_step)
        self._wrap(profiler.profile, "stop", self._profiler_stop)
        program_steps_listeners.append(self.program_marked_step)
        if settings.torch_ops:
            self._ops = TorchOps(torch, settings.announce)  # started at the first step

    def uninstall(self) -> None:
        self._stop_adopting()
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for owner, attribute, original in reversed(self._patches):
            setattr(owner, attribute, original)
        self._patches.clear()
        if self.program_marked_step in program_steps_listeners:
            program_steps_listeners.remove(self.program_marked_step)
        self._steps.end()

    def _wrap(self, owner: object, attribute: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, attribute)
        replacement = make(original)
        replacement.__wrapped__ = original
        for name in ("__name__", "__qualname__", "__doc__"):
            try:
                setattr(replacement, name, getattr(original, name))
            except (AttributeError, TypeError):
                pass
        self._patches.append((owner, attribute, original))
        setattr(owner, attribute, replacement)

    # ---- steps ----------------------------------------------------------------------------------
    # Who ends steps: the primary optimizer ("optimizer"), torch.profiler's step() ("profiler"), or
    # the program through tfprof.step ("program": nothing here marks steps then). In the first two
    # a step opens lazily, at the next fetch or training forward pass, so the epoch's end (the
    # fetch that raises StopIteration) and the time after the last step open none.

    def _begin_step_if_none(self) -> None:
        if self._ops is not None and not self._ops.started:
            self._ops.resume()
        self._steps.begin_if_none()

    def _end_step(self) -> None:
        if self._steps.end():
            self._stop_adopting()

    def program_marked_step(self) -> None:
        """The program marks steps itself (tfprof.step): nothing here marks any more."""
        self._end_step()
        self._steps.program_marked()

    def _optimizer_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._primary_optimizer is None:
            self._primary_optimizer = weakref.ref(optimizer)
        if self._is_primary(optimizer) and self._steps.source == "optimizer":
            self._begin_step_if_none()  # a step with no fetch and no forward seen is one all the same

    def _optimizer_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._is_primary(optimizer) and self._steps.source == "optimizer" and not self._steps.nvtx_took_over():
            if getattr(self._local, "optimizer_ranges", 0) > 0:
                # Post-hooks run inside torch's own "Optimizer.step#..." range: the step ends with
                # it, so that the optimizer's span lies inside its step.
                self._local.end_step_with_range = True
            else:
                self._end_step()

    def _is_primary(self, optimizer: Any) -> bool:
        return self._primary_optimizer is not None and self._primary_optimizer() is optimizer

    def _profiler_marks(self, number: int) -> None:
        """torch.profiler's ProfilerStep#N: the program's own steps, numbered as it numbers them."""
        self._steps.renumber(number, "profiler")

    # ---- modules --------------------------------------------------------------------------------

    # A global module hook costs every module call about 1 us even when it records nothing (it takes
    # nn.Module's slow call path): so one is used only to find the models, while the first step
    # runs. A model called at the top (no recorded module open on the thread) is adopted: the
    # modules down to module_depth get hooks of their own, the others none.

    def _adopt(self, module: Any, args: Any) -> None:
        stack = getattr(self._local, "modules", None)
        if stack or id(module) in self._adopted:
            return
        self._adopted.add(id(module))
        for path, child in module.named_modules():  # a module used twice is hooked once
            if path.count(".") + (1 if path else 0) >= self._depth_limit:
                continue
            self._handles.append(child.register_forward_pre_hook(self._forward_pre))
            if _is_layer_with_weights(child):
                post = self._layer_forward_post()
            else:
                post = self._forward_post
            self._handles.append(child.register_forward_hook(post, always_call=True))
        self._forward_pre(module, args)  # its own hook was registered too late for this call

    def _stop_adopting(self) -> None:
        if self._adopting is not None:
            self._adopting.remove()
            self._adopting = None

    def _forward_pre(self, module: Any, args: Any) -> None:
        stack = getattr(self._local, "modules", None)
        if stack is None:
            stack = self._local.modules = []
        if not stack and module.training and self._torch.is_grad_enabled():
            self._begin_step_if_none()
        name = self._names.get(id(module))
        span = _native.span(name if name is not None else self._name_module(module, stack))
        span.__enter__()
        stack.append((module, span))

    def _forward_post(self, module: Any, args: Any, output: Any) -> None:
        stack = getattr(self._local, "modules", None)
        if not stack:
            return
        if stack[-1][0] is module:
            stack.pop()[1].__exit__(None, None, None)
            return
        # A module whose pre-hook never ran (hooks installed mid-call) is not on the stack and
        # closes nothing; one that raised past inner calls closes them too.
        for index in range(len(stack) - 2, -1, -1):
            if stack[index][0] is module:
                for _, span in reversed(stack[index:]):
                    span.__exit__(None, None, None)
                del stack[index:]
                return

    def _layer_forward_post(self) -> Callable[[Any, Any, Any], None]:
        """The forward hook of a layer with weights and no children (Linear, Conv2d, norms,
        Embedding): it also brackets the autograd node that made the output (the layer's own op:
        ConvolutionBackward0, AddmmBackward0, ...) with a span "<module> (backward)", on whichever
        thread runs that node (a device's autograd thread on a GPU). That costs about 15 us a layer
        a step here (registering the node's two hooks, and calling them), so layers without weights
        (activations, pooling, dropout, losses: small element-wise backward ops) get none, nor do
        containers (their output's node is their last child's op, not their backward)."""
        backward: List[Any] = []  # the span, named at the first call (the name needs the caller)

        def begin(grad_outputs: Any) -> None:
            backward[0].__enter__()

        def end(grad_inputs: Any, grad_outputs: Any) -> None:
            backward[0].__exit__(None, None, None)

        def forward_post(module: Any, args: Any, output: Any) -> None:
            self._forward_post(module, args, output)
            node = _grad_node(output, self._torch.Tensor)
            if node is None:
                return
            if not backward:
                name = self._names.get(id(module), type(module).__name__)
                backward.append(_native.span(f"{name} (backward)"))
            node.register_prehook(begin)
            node.register_hook(end)

        return forward_post

    def _name_module(self, module: Any, stack: List[Tuple[Any, Any]]) -> str:
        """"Net" for a model called at the top, "Net.encoder.0: Linear" for what it calls."""
        cls = type(module).__name__
        if not stack:
            name = cls
        else:
            parent = stack[-1][0]
            parent_path = self._names.get(id(parent), type(parent).__name__).split(": ", 1)[0]
            attribute = next((key for key, child in parent._modules.items() if child is module), cls)
            name = f"{parent_path}.{attribute}: {cls}"
        key = id(module)
        try:
            weakref.finalize(module, self._names.pop, key, None)
        except TypeError:  # not weakly referenceable: named again at its next call
            return name
        self._names[key] = name
        return name

    # ---- DataLoader, backward, record_function, torch.profiler ------------------------------------

    # The fetch's span is torch's own record_function ("enumerate(DataLoader)#...__next__"), as
    # is the optimizer's ("Optimizer.step#SGD.step"): recorded through the record_function hook.
    def _next_batch(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def __next__(iterator: Any) -> Any:
            if not _exhausted(iterator):
                self._begin_step_if_none()
            return original(iterator)

        return __next__

    # A backward pass is a "backward" span on every thread that runs it. On a GPU, PyTorch runs
    # the pass on its own thread per device ("pt_autograd_0"), the calling thread waiting, so the
    # caller's span does not cover the kernels launched there. That thread's span opens in a hook
    # on the gradient of each root tensor (tensor hooks run before node hooks, so it encloses the
    # layers' backward spans) and closes in a final callback, which the engine runs on the thread
    # that finishes the pass. Where another thread finishes it (a graph with CPU and GPU parts),
    # the span is closed at that thread's next pass instead.

    def _backward(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def backward(*args: Any, **kwargs: Any) -> Any:
            handles = self._hook_pass_roots(args[0] if args else kwargs.get("tensors"))
            try:
                with _BACKWARD_SPAN:
                    return original(*args, **kwargs)
            finally:
                for handle in handles:
                    handle.remove()

        return backward

    def _hook_pass_roots(self, tensors: Any) -> List[Any]:
        torch = self._torch
        roots = [tensors] if isinstance(tensors, torch.Tensor) else tensors
        if not isinstance(roots, (list, tuple)):
            return []
        # The engine runs a pass on the caller's thread unless a root's gradient lives on a device
        # (CUDA and the like have their own threads): then no hook is needed.
        roots = [root for root in roots if isinstance(root, torch.Tensor) and root.device.type != "cpu"]
        if not roots:
            return []
        caller = threading.get_ident()
        token = object()  # this pass
        local = self._local

        def close_pass() -> None:
            if getattr(local, "pass_token", None) is token:
                local.pass_token = None
                _BACKWARD_SPAN.__exit__(None, None, None)

        def on_root_gradient(gradient: Any) -> None:
            if threading.get_ident() == caller:
                return  # the caller's own span covers it
            open_token = getattr(local, "pass_token", None)
            if open_token is token:
                return  # another root of this pass
            if open_token is not None:  # an earlier pass that another thread finished
                _BACKWARD_SPAN.__exit__(None, None, None)
            local.pass_token = token
            _BACKWARD_SPAN.__enter__()
            torch.autograd.Variable._execution_engine.queue_callback(close_pass)

        handles = []
        for root in roots:
            if root.grad_fn is not None:
                handles.append(root.register_hook(on_root_gradient))
        return handles

    def _record_function_enter(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def __enter__(record: Any) -> Any:
            result = original(record)
            name = getattr(record, "name", None)
            if isinstance(name, str) and not name.startswith(STEP_MARKERS_OF_PROFILER):
                if self._ops is not None and self._ops.running:
                    span: Any = NO_SPAN  # torch.profiler records the range with its ops
                else:
                    span = _native.span(name)
                    span.__enter__()
                record.__dict__["_tfprof_span"] = span
                if name.startswith(OPTIMIZER_STEP_RANGE):
                    self._local.optimizer_ranges = getattr(self._local, "optimizer_ranges", 0) + 1
            return result

        return __enter__

    def _record_function_exit(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def __exit__(record: Any, *exc_info: Any) -> Any:
            span = record.__dict__.pop("_tfprof_span", None)
            if span is not None:
                span.__exit__(None, None, None)
                if getattr(record, "name", "").startswith(OPTIMIZER_STEP_RANGE):
                    self._local.optimizer_ranges -= 1
                    if self._local.optimizer_ranges == 0 and getattr(self._local, "end_step_with_range", False):
                        self._local.end_step_with_range = False
                        self._end_step()
            return original(record, *exc_info)

        return __exit__

    def _profiler_start(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def start(profile: Any) -> Any:
            if self._ops is not None:
                if self._ops.owns(profile):
                    return original(profile)
                self._ops.program_started()  # one torch.profiler at a time: the program's first
            result = original(profile)
            if getattr(profile, "record_steps", False):
                self._profiler_marks(profile.step_num)
            return result

        return start

    def _profiler_step(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def step(profile: Any) -> Any:
            result = original(profile)
            self._profiler_marks(profile.step_num)
            return result

        return step

    def _profiler_stop(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def stop(profile: Any) -> Any:
            if self._ops is not None and self._ops.owns(profile):
                return original(profile)
            if self._steps.source == "profiler":
                self._end_step()
            try:
                return original(profile)
            finally:
                if self._ops is not None:
                    self._ops.program_stopped()

        return stop


_BACKWARD_SPAN = _native.span("backward")


def _is_layer_with_weights(module: Any) -> bool:
    """A module with parameters of its own and no children: Linear, Conv2d, LayerNorm, ..."""
    return (next(iter(module.children()), None) is None
            and next(iter(module.parameters(recurse=False)), None) is not None)


def _grad_node(output: Any, tensor_type: type) -> Any:
    """The autograd node that made a module's output (its first tensor's), or None."""
    if isinstance(output, (tuple, list)):
        output = output[0] if output else None
    elif isinstance(output, dict):
        output = next(iter(output.values()), None)
    return getattr(output, "grad_fn", None) if isinstance(output, tensor_type) else None


def _exhausted(iterator: Any) -> bool:
    """Whether this fetch can only raise StopIteration (a map-style dataset's epoch is over), so
    that it opens no step of its own."""
    try:
        return bool(iterator._num_yielded >= len(iterator))
    except (AttributeError, TypeError, NotImplementedError):
        return False
