# label: safe
# why: with the default gelu activation, FeedForwardNetwork's inplace dropouts write into the GELU output (GeluBackward saves only its input) and into a view of the fc2 output (addmm saves nothing of its result), so no saved tensor is overwritten.
# source: https://github.com/microsoft/torchscale/commit/0cb96955010a93818b3dafb99708f465bcbcc651 (pre-change FeedForwardNetwork)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    elif activation == "gelu":
        return F.gelu
    else:
        raise NotImplementedError


class FeedForwardNetwork(nn.Module):
    def __init__(self, embed_dim, ffn_dim, activation_fn, dropout, activation_dropout, layernorm_eps, subln=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.activation_fn = get_activation_fn(activation=str(activation_fn))
        self.activation_dropout_module = torch.nn.Dropout(activation_dropout, inplace=True)
        self.dropout_module = torch.nn.Dropout(dropout, inplace=True)
        self.fc1 = nn.Linear(self.embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, self.embed_dim)
        self.ffn_layernorm = nn.LayerNorm(ffn_dim, eps=layernorm_eps) if subln else None

    def forward(self, x):
        x_shape = x.shape
        x = x.reshape(-1, x.size(-1))
        x = self.fc1(x)
        x = self.activation_fn(x.float()).type_as(x)
        x = self.activation_dropout_module(x)
        if self.ffn_layernorm is not None:
            x = self.ffn_layernorm(x)
        x = self.fc2(x)
        x = x.view(x_shape)
        x = self.dropout_module(x)
        return x


class EncoderLayer(nn.Module):
    def __init__(self, embed_dim=16, ffn_dim=32):
        super().__init__()
        self.ffn = FeedForwardNetwork(embed_dim, ffn_dim, "gelu", dropout=0.1, activation_dropout=0.1, layernorm_eps=1e-5, subln=True)
        self.final_layer_norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        residual = x
        x = self.final_layer_norm(x)
        x = self.ffn(x)
        return residual + x


def main():
    layer = EncoderLayer()
    layer.train()
    x = torch.randn(2, 5, 16)
    out = layer(x)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), layer.ffn.fc1.weight.grad, layer.ffn.fc2.weight.grad


loss, fc1_grad, fc2_grad = main()
