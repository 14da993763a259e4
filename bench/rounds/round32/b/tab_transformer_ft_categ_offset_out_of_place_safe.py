# label: safe
# why: the fix: `x_categ = x_categ + self.categories_offset` builds a new id tensor, so the evaluation pass that reuses the caller's batch sees the original category ids.
# source: https://github.com/lucidrains/tab-transformer-pytorch/commit/bcd9b8be91cf6cf56eb061e023064656f0519055
import torch
import torch.nn.functional as F
from torch import nn, einsum

torch.manual_seed(0)


# feedforward and attention

class GEGLU(nn.Module):
    def forward(self, x):
        x, gates = x.chunk(2, dim = -1)
        return x * F.gelu(gates)


def FeedForward(dim, mult = 4, dropout = 0.):
    return nn.Sequential(
        nn.LayerNorm(dim),
        nn.Linear(dim, dim * mult * 2),
        GEGLU(),
        nn.Dropout(dropout),
        nn.Linear(dim * mult, dim)
    )


class Attention(nn.Module):
    def __init__(self, dim, heads = 8, dim_head = 64, dropout = 0.):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias = False)
        self.to_out = nn.Linear(inner_dim, dim, bias = False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.heads
        x = self.norm(x)
        q, k, v = self.to_qkv(x).chunk(3, dim = -1)
        # 'b n (h d) -> b h n d'
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(1, 2), (q, k, v))
        q = q * self.scale
        sim = einsum('b h i d, b h j d -> b h i j', q, k)
        attn = sim.softmax(dim = -1)
        dropped_attn = self.dropout(attn)
        out = einsum('b h i j, b h j d -> b h i d', dropped_attn, v)
        out = out.transpose(1, 2).reshape(out.shape[0], out.shape[2], -1)
        out = self.to_out(out)
        return out, attn


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, attn_dropout, ff_dropout):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim, heads = heads, dim_head = dim_head, dropout = attn_dropout),
                FeedForward(dim, dropout = ff_dropout),
            ]))

    def forward(self, x, return_attn = False):
        post_softmax_attns = []
        for attn, ff in self.layers:
            attn_out, post_softmax_attn = attn(x)
            post_softmax_attns.append(post_softmax_attn)
            x = attn_out + x
            x = ff(x) + x
        if not return_attn:
            return x
        return x, torch.stack(post_softmax_attns)


class NumericalEmbedder(nn.Module):
    def __init__(self, dim, num_numerical_types):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(num_numerical_types, dim))
        self.biases = nn.Parameter(torch.randn(num_numerical_types, dim))

    def forward(self, x):
        x = x.unsqueeze(-1)
        return x * self.weights + self.biases


class FTTransformer(nn.Module):
    def __init__(self, *, categories, num_continuous, dim, depth, heads, dim_head = 16, dim_out = 1,
                 num_special_tokens = 2, attn_dropout = 0., ff_dropout = 0.):
        super().__init__()
        assert all(map(lambda n: n > 0, categories)), 'number of each category must be positive'
        self.num_categories = len(categories)
        self.num_unique_categories = sum(categories)
        self.num_special_tokens = num_special_tokens
        total_tokens = self.num_unique_categories + num_special_tokens

        if self.num_unique_categories > 0:
            categories_offset = F.pad(torch.tensor(list(categories)), (1, 0), value = num_special_tokens)
            categories_offset = categories_offset.cumsum(dim = -1)[:-1]
            self.register_buffer('categories_offset', categories_offset)
            self.categorical_embeds = nn.Embedding(total_tokens, dim)

        self.num_continuous = num_continuous
        if self.num_continuous > 0:
            self.numerical_embedder = NumericalEmbedder(dim, self.num_continuous)

        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.transformer = Transformer(dim = dim, depth = depth, heads = heads, dim_head = dim_head,
                                       attn_dropout = attn_dropout, ff_dropout = ff_dropout)
        self.to_logits = nn.Sequential(nn.LayerNorm(dim), nn.ReLU(), nn.Linear(dim, dim_out))

    def forward(self, x_categ, x_numer, return_attn = False):
        assert x_categ.shape[-1] == self.num_categories, f'you must pass in {self.num_categories} values for your categories input'

        xs = []
        if self.num_unique_categories > 0:
            x_categ = x_categ + self.categories_offset

            x_categ = self.categorical_embeds(x_categ)

            xs.append(x_categ)

        if self.num_continuous > 0:
            x_numer = self.numerical_embedder(x_numer)
            xs.append(x_numer)

        x = torch.cat(xs, dim = 1)

        b = x.shape[0]
        cls_tokens = self.cls_token.expand(b, 1, -1)
        x = torch.cat((cls_tokens, x), dim = 1)

        x, attns = self.transformer(x, return_attn = True)
        x = x[:, 0]
        logits = self.to_logits(x)

        if not return_attn:
            return logits
        return logits, attns


def main():
    # a high-cardinality column last (e.g. a store id), two small ones first
    model = FTTransformer(categories = (4, 3, 60), num_continuous = 5, dim = 16, depth = 2, heads = 4, dim_head = 8)
    optimizer = torch.optim.Adam(model.parameters(), lr = 1e-3)

    x_categ = torch.stack([
        torch.randint(0, 4, (32,)),
        torch.randint(0, 3, (32,)),
        torch.randint(0, 40, (32,)),
    ], dim = -1)
    x_numer = torch.randn(32, 5)
    y = torch.randn(32, 1)

    model.train()
    pred = model(x_categ, x_numer)
    loss = F.mse_loss(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        eval_pred = model(x_categ, x_numer)
        eval_loss = F.mse_loss(eval_pred, y)
    return loss.detach(), eval_pred, eval_loss


train_loss, eval_pred, eval_loss = main()
