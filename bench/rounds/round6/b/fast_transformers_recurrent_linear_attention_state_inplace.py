# label: hazard raises
# why: the recurrent memory [Si, Zi] returned at step t was saved by that step's einsums; step t+1 accumulates into it with `+=`, so backward through the unrolled sequence fails
# source: https://github.com/idiap/fast-transformers/pull/10 (fast_transformers/recurrent/attention/linear_attention.py before commit 2984f44)
import torch
from torch.nn import Linear, Module

torch.manual_seed(0)


def elu_feature_map(x):
    return torch.nn.functional.elu(x) + 1


class RecurrentLinearAttention(Module):
    def __init__(self, feature_map=None, eps=1e-6):
        super(RecurrentLinearAttention, self).__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, memory=None):
        # Apply the feature map to the query and key
        Q = self.feature_map(query)
        K = self.feature_map(key)

        # Extract some shapes
        N, H, D = Q.shape
        _, _, M = value.shape

        # Extract the memory or initialize it
        if memory is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = memory

        # Ensure the batch size did not change
        if len(Si) != N:
            raise ValueError("The batch size changed during iteration")

        # Update the internal state
        Zi += K  # <-- IPL001: Zi was saved by the previous step's einsum
        Si += torch.einsum("nhd,nhm->nhdm", K, value)  # <-- IPL001: Si was saved by the previous step's einsum

        # Compute the output
        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)

        return V, [Si, Zi]


class RecurrentAttentionLayer(Module):
    def __init__(self, attention, d_model, n_heads, d_keys=None, d_values=None):
        super(RecurrentAttentionLayer, self).__init__()
        d_keys = d_keys or (d_model // n_heads)
        d_values = d_values or (d_model // n_heads)
        self.inner_attention = attention
        self.query_projection = Linear(d_model, d_keys * n_heads)
        self.key_projection = Linear(d_model, d_keys * n_heads)
        self.value_projection = Linear(d_model, d_values * n_heads)
        self.out_projection = Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, query, key, value, memory=None):
        query = self.query_projection(query)
        key = self.key_projection(key)
        value = self.value_projection(value)

        N, D = query.shape
        H = self.n_heads
        new_value, memory = self.inner_attention(
            query.view(N, H, -1),
            key.view(N, H, -1),
            value.view(N, H, -1),
            memory
        )
        new_value = new_value.view(N, -1)

        return self.out_projection(new_value), memory


layer = RecurrentAttentionLayer(RecurrentLinearAttention(), d_model=8, n_heads=2)
head = Linear(8, 3)
x = torch.randn(4, 2, 8)  # (time, batch, features)

memory = None
logits = []
for t in range(x.shape[0]):
    out, memory = layer(x[t], x[t], x[t], memory=memory)
    logits.append(head(out))
loss = torch.stack(logits).pow(2).mean()
loss.backward()
