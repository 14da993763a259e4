# label: safe
# why: the input is cloned exactly when a cache is given, and only then is the copy written in place, so the caller's tensor is never touched.
import torch

torch.manual_seed(0)


def step(x, w, cache):
    if cache is None:
        state = x
    else:
        state = x.clone()
    out = torch.tanh(state + w)
    if cache is not None:
        state.zero_()
        cache.append(out)
    return out, x


x = torch.randn(3, 4)
w = torch.randn(3, 4, requires_grad=True)
first, seen = step(x, w, None)
second, kept = step(x, w, [])
total = (first + second + seen + kept).sum()
total.backward()
