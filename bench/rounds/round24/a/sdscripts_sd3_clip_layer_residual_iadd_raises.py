# label: hazard raises
# why: the SD3 CLIPLayer adds the attention and MLP outputs into x with `+=`, but x is the input that layer_norm1 / layer_norm2 just saved for backward, so training the text encoder fails with "output 0 of AddBackward0 ... is at version 2N" (N = number of layers).
# source: https://github.com/kohya-ss/sd-scripts/issues/1487 (library/sd3_models.py CLIPLayer.forward as added in commit e5268286bf90ddcc53ad1deb31aba857cfa967d5)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def attention(q, k, v, heads, mask=None):
    b, _, dim_head = q.shape
    dim_head //= heads
    q, k, v = map(lambda t: t.view(b, -1, heads, dim_head).transpose(1, 2), (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return out.transpose(1, 2).reshape(b, -1, heads * dim_head)


class CLIPAttention(nn.Module):
    def __init__(self, embed_dim, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)

    def forward(self, x, mask=None):
        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)
        out = attention(q, k, v, self.heads, mask)
        return self.out_proj(out)


class MLP(nn.Module):
    def __init__(self, in_features, hidden_features, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, out_features)

    def forward(self, x):
        x = self.fc1(x)
        x = x * torch.sigmoid(1.702 * x)  # quick_gelu
        return self.fc2(x)


class CLIPLayer(nn.Module):
    def __init__(self, embed_dim, heads, intermediate_size):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(embed_dim)
        self.self_attn = CLIPAttention(embed_dim, heads)
        self.layer_norm2 = nn.LayerNorm(embed_dim)
        self.mlp = MLP(embed_dim, intermediate_size, embed_dim)

    def forward(self, x, mask=None):
        x += self.self_attn(self.layer_norm1(x), mask)  # <-- IPL001
        x += self.mlp(self.layer_norm2(x))  # <-- IPL001
        return x


class CLIPEncoder(nn.Module):
    def __init__(self, num_layers, embed_dim, heads, intermediate_size):
        super().__init__()
        self.layers = nn.ModuleList([CLIPLayer(embed_dim, heads, intermediate_size) for i in range(num_layers)])

    def forward(self, x, mask=None, intermediate_output=None):
        if intermediate_output is not None:
            if intermediate_output < 0:
                intermediate_output = len(self.layers) + intermediate_output
        intermediate = None
        for i, l in enumerate(self.layers):
            x = l(x, mask)
            if i == intermediate_output:
                intermediate = x.clone()
        return x, intermediate


class CLIPEmbeddings(nn.Module):
    def __init__(self, embed_dim, vocab_size=64, num_positions=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, embed_dim)
        self.position_embedding = nn.Embedding(num_positions, embed_dim)

    def forward(self, input_tokens):
        return self.token_embedding(input_tokens) + self.position_embedding.weight


class CLIPTextModel_(nn.Module):
    def __init__(self, num_layers=2, embed_dim=16, heads=2, intermediate_size=32):
        super().__init__()
        self.embeddings = CLIPEmbeddings(embed_dim)
        self.encoder = CLIPEncoder(num_layers, embed_dim, heads, intermediate_size)
        self.final_layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, input_tokens, intermediate_output=None, final_layer_norm_intermediate=True):
        x = self.embeddings(input_tokens)
        causal_mask = torch.empty(x.shape[1], x.shape[1], dtype=x.dtype).fill_(float("-inf")).triu_(1)
        x, i = self.encoder(x, mask=causal_mask, intermediate_output=intermediate_output)
        x = self.final_layer_norm(x)
        if i is not None and final_layer_norm_intermediate:
            i = self.final_layer_norm(i)
        pooled_output = x[torch.arange(x.shape[0]), input_tokens.to(dtype=torch.int).argmax(dim=-1)]
        return x, i, pooled_output


def main():
    text_model = CLIPTextModel_()
    input_tokens = torch.randint(1, 63, (2, 8))
    input_tokens[:, -1] = 63  # eos
    x, penultimate, pooled = text_model(input_tokens, intermediate_output=-2)
    loss = penultimate.pow(2).mean() + pooled.pow(2).mean()
    loss.backward()
    return loss, text_model.embeddings.token_embedding.weight.grad


loss, grad = main()
