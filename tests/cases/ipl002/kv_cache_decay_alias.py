# label: hazard silent
# why: prev_keys is an alias of the cache tensor, so decaying the cache in place also changes the "previous step" keys used for the drift penalty
import torch
import torch.nn as nn

torch.manual_seed(0)

d_model, max_len = 8, 6
wq = nn.Linear(d_model, d_model)
wk = nn.Linear(d_model, d_model)
wv = nn.Linear(d_model, d_model)

cache_k = torch.randn(1, max_len, d_model)
cache_v = torch.randn(1, max_len, d_model)
decay = 0.9

x = torch.randn(1, 1, d_model)
q, k_new, v_new = wq(x), wk(x), wv(x)

prev_keys = cache_k
cache_k.mul_(decay)  # <-- IPL002
cache_v = cache_v * decay
keys = torch.cat([cache_k, k_new], dim=1)
values = torch.cat([cache_v, v_new], dim=1)

attn = torch.softmax(q @ keys.transpose(1, 2) / d_model ** 0.5, dim=-1)
ctx = attn @ values
drift = (k_new - prev_keys.mean(1, keepdim=True)).pow(2).mean()
loss = ctx.pow(2).mean() + 0.1 * drift
loss.backward()
wk_grad = wk.weight.grad
