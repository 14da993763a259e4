# label: hazard raises
# why: ResidualAdd adds the sublayer output in place to x, but the LayerNorm at the start of the sublayer saved x for its backward
# source: https://github.com/FrancescoSaverioZuppichini/glasses/issues/207
from collections import OrderedDict
from typing import List

import torch
import torch.nn.functional as F
from torch import Tensor, nn

torch.manual_seed(0)


class ViTTokens(nn.Module):
    def __init__(self, emb_size: int):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, emb_size))

    def forward(self, x: Tensor) -> List[Tensor]:
        b = x.shape[0]
        tokens = []
        for token in self.parameters():
            # for each token repeat itself over the batch dimension
            tokens.append(token.expand(b, -1, -1))
        return tokens

    def __len__(self):
        return len(list(self.parameters()))


class PatchEmbedding(nn.Module):
    def __init__(self, in_channels=3, patch_size=4, emb_size=16, img_size=16, tokens=ViTTokens):
        super().__init__()
        self.patch_size = patch_size
        self.conv = nn.Conv2d(in_channels, emb_size, kernel_size=patch_size, stride=patch_size)
        self.tokens = tokens(emb_size)
        self.positions = nn.Parameter(torch.randn((img_size // patch_size) ** 2 + len(self.tokens), emb_size))

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x).flatten(2).transpose(1, 2)
        # get the tokens
        tokens = self.tokens(x)
        # prepend the tokens to the input
        x = torch.cat([*tokens, x], dim=1)
        # add position embedding
        x += self.positions
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, emb_size=16, num_heads=2, att_drop_p=0.0, projection_drop_p=0.0, qkv_bias=False):
        super().__init__()
        self.emb_size = emb_size
        self.num_heads = num_heads
        self.qkv = nn.Linear(emb_size, emb_size * 3, bias=qkv_bias)
        self.att_drop = nn.Dropout(att_drop_p)
        self.projection = nn.Sequential(nn.Linear(emb_size, emb_size), nn.Dropout(projection_drop_p))
        self.scaling = (self.emb_size // num_heads) ** -0.5

    def forward(self, x: Tensor, mask: Tensor = None) -> Tensor:
        b, n, _ = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv[0], qkv[1], qkv[2]
        energy = torch.einsum("bhij, bhkj -> bhik", queries, keys) * self.scaling
        att = F.softmax(energy, dim=-1)
        att = self.att_drop(att)
        out = torch.einsum("bhij, bhjk -> bhik ", att, values)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.projection(out)


class ResidualAdd(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        out = self.fn(x, **kwargs)
        x += out  # <-- IPL001: the LayerNorm inside fn saved x for backward
        return x


class FeedForwardBlock(nn.Sequential):
    def __init__(self, emb_size, expansion=4, drop_p=0.0, activation=nn.GELU):
        super().__init__(
            nn.Linear(emb_size, expansion * emb_size),
            activation(),
            nn.Dropout(drop_p),
            nn.Linear(expansion * emb_size, emb_size),
            nn.Dropout(drop_p),
        )


class TransformerEncoderBlock(nn.Sequential):
    def __init__(self, emb_size=16, forward_expansion=2, forward_drop_p=0.0, activation=nn.GELU, **kwargs):
        super().__init__(
            ResidualAdd(nn.Sequential(nn.LayerNorm(emb_size), MultiHeadAttention(emb_size, **kwargs))),
            ResidualAdd(nn.Sequential(
                nn.LayerNorm(emb_size),
                FeedForwardBlock(emb_size, expansion=forward_expansion, drop_p=forward_drop_p, activation=activation),
            )),
        )


class TransformerEncoder(nn.Module):
    def __init__(self, depth=2, emb_size=16, block=TransformerEncoderBlock, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList([block(emb_size, **kwargs) for _ in range(depth)])
        self.norm = nn.LayerNorm(emb_size)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class ViT(nn.Sequential):
    def __init__(self, in_channels=3, patch_size=4, emb_size=16, img_size=16, depth=2, n_classes=5, **kwargs):
        super().__init__(OrderedDict({
            "embedding": PatchEmbedding(in_channels, patch_size, emb_size, img_size),
            "encoder": TransformerEncoder(depth, emb_size, **kwargs),
            "head": nn.Linear(emb_size, n_classes),
        }))

    def forward(self, x):
        x = self.encoder(self.embedding(x))
        return self.head(x[:, 0])


model = ViT(num_heads=2)
images = torch.randn(2, 3, 16, 16)
labels = torch.tensor([1, 3])
logits = model(images)
loss = F.cross_entropy(logits, labels)
loss.backward()
