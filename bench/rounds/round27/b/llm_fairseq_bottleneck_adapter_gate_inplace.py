# label: hazard raises
# why: the gated bottleneck adapter scales its output with x *= gate, but x was just fed to the gate Linear, which saved it for the weight gradient, so the adapter's backward finds x modified in place.
# source: https://github.com/facebookresearch/fairseq/commit/e30e9fab32fd742f26c0adf845a2607b2a0426a6 ("fixed broken adapter code", pre-fix fairseq/modules/bottleneck_adapter_block.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BottleneckAdapter(nn.Module):
    """
    A simple adapter piece specific to a language-pair
    """
    def __init__(self, in_dim, bottleneck_dim, activation="relu", dropout=0, ln_before=False,
                 use_gating=False, original_dropout=0, original_ln_before=False):
        super().__init__()
        self.in_dim = in_dim
        self.bottleneck_dim = bottleneck_dim
        self.use_gating = use_gating
        self.ln_before = ln_before
        self.original_ln_before = original_ln_before
        self.activation_fn = F.relu if activation == "relu" else F.gelu

        self.layer_norm = nn.LayerNorm(self.in_dim)
        self.dropout_module = nn.Dropout(p=dropout)
        self.up = nn.Linear(self.in_dim, self.bottleneck_dim)
        self.down = nn.Linear(self.bottleneck_dim, self.in_dim)
        if self.use_gating:
            self.gate = nn.Linear(self.in_dim, 1)

        self.original_layer_norm = nn.LayerNorm(self.in_dim)
        self.original_dropout_module = nn.Dropout(p=original_dropout)

    def residual_connection(self, x, residual):
        return residual + x

    def forward(self, x, original_residual):
        residual = x
        if self.ln_before:
            x = self.layer_norm(x)

        x = self.down(self.activation_fn(self.up(x)))

        if self.use_gating:
            gate = torch.sigmoid(self.gate(x))
            gate = torch.mean(gate, dim=1).unsqueeze(-1)
            x *= gate  # <-- IPL001

        x = self.dropout_module(x)
        x = self.residual_connection(x, residual)
        if not self.ln_before:
            x = self.layer_norm(x)

        x = self.original_dropout_module(x)
        x = self.residual_connection(x, original_residual)
        if not self.original_ln_before:
            x = self.original_layer_norm(x)
        return x


class BottleneckAdapterBlock(nn.Module):
    """
    A simple adapter block which houses multiple adapter pieces, i.e. one per language-pair
    """
    def __init__(self, lang_ids, in_dim, bottleneck_dim, activation="relu", dropout=0, ln_before=False,
                 use_gating=False):
        super().__init__()
        self.adapters = nn.ModuleDict({
            lang: BottleneckAdapter(in_dim, bottleneck_dim, activation, dropout, ln_before, use_gating)
            for lang in lang_ids
        })

    def forward(self, x, lang_id, original_residual):
        return self.adapters[lang_id](x, original_residual)


def main():
    layer_ffn = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    for p in layer_ffn.parameters():
        p.requires_grad_(False)  # frozen base model, only adapters train
    adapters = BottleneckAdapterBlock(["en-hi", "en-ta"], in_dim=8, bottleneck_dim=4, use_gating=True)

    x = torch.randn(5, 2, 8)  # T x B x C
    residual = x
    ffn_out = layer_ffn(x)
    out = adapters(ffn_out, "en-hi", original_residual=residual)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), adapters.adapters["en-hi"].gate.weight.grad


loss, gate_grad = main()
