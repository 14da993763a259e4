# label: hazard silent
# why: the saliency helper retains the grad of the content-token view, but the CLS offset is then added into the base in place; the view's grad_fn is regenerated and the retained .grad is never filled for the pooled token computed earlier
# source: https://github.com/pytorch/pytorch/issues/8874
import torch
import torch.nn as nn

torch.manual_seed(0)


class Saliency:
    def __init__(self):
        self.watched = {}

    def watch(self, name, tensor):
        tensor.retain_grad()
        self.watched[name] = tensor

    def grads(self):
        out = {}
        for name, t in self.watched.items():
            out[name] = t.grad if t.grad is not None else torch.zeros_like(t)
        return out


class LastTokenClassifier(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.cls_offset = nn.Parameter(torch.ones(dim) * 0.1)
        self.head = nn.Linear(dim, 1)

    def forward(self, tokens, saliency):
        h = self.proj(tokens)
        content = h[1:]
        last_token = content[-1]
        saliency.watch("content", content)
        h[0] += self.cls_offset  # <-- IPL006: in-place write on the base rebases the watched view
        return self.head(torch.tanh(last_token)).sum() + self.head(h[0]).sum()


model = LastTokenClassifier(4)
tokens = torch.randn(5, 4)
saliency = Saliency()
score = model(tokens, saliency)
score.backward()
content_grad = saliency.grads()["content"]
