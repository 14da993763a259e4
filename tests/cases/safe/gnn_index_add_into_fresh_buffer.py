# label: safe
# why: index_add_ and scatter_add_ write into freshly allocated zero buffers that nothing saved, so gradients flow back to the messages correctly.
import torch
import torch.nn as nn

torch.manual_seed(0)

num_nodes, dim = 4, 3
x = torch.randn(num_nodes, dim)
edge_index = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 2]])
msg_fn = nn.Linear(dim, dim)
upd_fn = nn.Linear(2 * dim, dim)

src, dst = edge_index
messages = torch.relu(msg_fn(x[src]))
agg = torch.zeros(num_nodes, dim)
agg.index_add_(0, dst, messages)

deg = torch.zeros(num_nodes)
deg.scatter_add_(0, dst, torch.ones(dst.numel()))
agg = agg / deg.clamp(min=1).unsqueeze(-1)

h = upd_fn(torch.cat([x, agg], dim=-1))
loss = h.pow(2).sum()
loss.backward()
grad_msg = msg_fn.weight.grad
grad_upd = upd_fn.weight.grad
