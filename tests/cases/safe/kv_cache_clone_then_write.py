# label: safe
# why: the new key/value are written into fresh clones of the cache buffers, so nothing saved or aliased is modified
import torch
import torch.nn as nn

torch.manual_seed(0)

d, max_len, t = 8, 6, 3
wq, wk, wv = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
cache_k = torch.randn(1, max_len, d)
cache_v = torch.randn(1, max_len, d)

x = torch.randn(1, 1, d)
q = wq(x)
k_all = cache_k.clone()
v_all = cache_v.clone()
k_all[:, t] = wk(x)[:, 0]
v_all[:, t] = wv(x)[:, 0]
k_ctx, v_ctx = k_all[:, : t + 1], v_all[:, : t + 1]

scores = q @ k_ctx.transpose(1, 2) / d ** 0.5
attn = torch.softmax(scores, dim=-1)
out = attn @ v_ctx
ref = (q @ cache_k[:, :t].transpose(1, 2)).mean()
loss = out.pow(2).mean() + 0.01 * ref
loss.backward()
wk_grad = wk.weight.grad
wv_grad = wv.weight.grad
