# label: safe
# why: as in the fixed patch setter, the hook clones the hooked activation before writing the cached head into it and returns the clone, so no unbind() view or saved tensor is modified.
# source: https://github.com/TransformerLensOrg/TransformerLens/pull/1187
import torch
import torch.nn as nn
from functools import partial

torch.manual_seed(0)


class HookPoint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fwd_hooks = []

    def add_hook(self, hook_fn):
        self.fwd_hooks.append(hook_fn)

    def forward(self, x):
        for hook_fn in self.fwd_hooks:
            out = hook_fn(x, hook=self)
            if out is not None:
                x = out
        return x


class Attention(nn.Module):
    def __init__(self, d_model=8, n_heads=2):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.hook_q = HookPoint()
        self.hook_z = HookPoint()

    def forward(self, resid):
        B, T, D = resid.shape
        qkv = self.W_qkv(resid).view(B, T, 3, self.n_heads, self.d_head).permute(2, 0, 1, 3, 4)
        q, k, v = qkv.unbind(0)
        q = self.hook_q(q)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d_head ** 0.5
        pattern = scores.softmax(-1)
        z = self.hook_z(torch.einsum("bhqk,bkhd->bqhd", pattern, v))
        return self.W_O(z.reshape(B, T, D))


class TinyTransformer(nn.Module):
    def __init__(self, vocab=11, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.attn = Attention(d_model)
        self.unembed = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        resid = self.embed(tokens)
        resid = resid + self.attn(resid)
        return self.unembed(resid)


def patch_head_vector(activation, hook, head_index, clean_cache):
    activation = activation.clone()
    activation[:, :, head_index, :] = clean_cache["q"][:, :, head_index, :]
    return activation


model = TinyTransformer()
clean_tokens = torch.tensor([[1, 2, 3, 4]])
corrupted_tokens = torch.tensor([[1, 5, 3, 4]])
clean_cache = {}
model.attn.hook_q.add_hook(lambda act, hook: clean_cache.__setitem__("q", act.detach().clone()))
with torch.no_grad():
    model(clean_tokens)
model.attn.hook_q.fwd_hooks.clear()
model.attn.hook_q.add_hook(partial(patch_head_vector, head_index=1, clean_cache=clean_cache))
patched_logits = model(corrupted_tokens)
logit_diff = patched_logits[0, -1, 3] - patched_logits[0, -1, 5]
logit_diff.backward()
