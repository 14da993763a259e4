# label: hazard silent
# why: `out.data` shares storage with the sigmoid output but not its version counter, so zeroing it in place goes unnoticed by autograd and SigmoidBackward computes a.grad from the overwritten output (all zeros) instead of raising.
# source: https://github.com/pytorch/pytorch/issues/6990 (".data vs .detach": zou3519's example of in-place changes through .data giving incorrect gradients)
import torch

torch.manual_seed(0)

a = torch.tensor([1, 2, 3.], requires_grad=True)
out = a.sigmoid()
c = out.data
c.zero_()  # <-- IPL007: writes through .data into the sigmoid output that SigmoidBackward saved; no version check
out.sum().backward()
a_grad = a.grad.clone()
