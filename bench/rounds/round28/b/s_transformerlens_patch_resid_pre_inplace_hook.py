# label: safe
# why: the activation-patching hook zeroes the last position of hook_resid_pre in place and returns it; that tensor is a plain sum (embed + pos_embed) that no backward node saved, so attribution gradients through the patched run are correct.
# source: https://github.com/TransformerLensOrg/TransformerLens/pull/156
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HookPoint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fwd_hooks = []
        self.name = None

    def add_hook(self, hook):
        def full_hook(module, module_input, module_output):
            return hook(module_output, hook=self)
        handle = self.register_forward_hook(full_hook)
        self.fwd_hooks.append(handle)

    def remove_hooks(self):
        for handle in self.fwd_hooks:
            handle.remove()
        self.fwd_hooks = []

    def forward(self, x):
        return x


class AttnOnlyBlock(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.hook_resid_pre = HookPoint()
        self.hook_resid_post = HookPoint()

    def forward(self, resid_pre):
        resid_pre = self.hook_resid_pre(resid_pre)
        x = self.ln1(resid_pre)
        seq = x.shape[1]
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        attn_out, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return self.hook_resid_post(resid_pre + attn_out)


class HookedTransformer(nn.Module):
    def __init__(self, d_vocab=20, d_model=16, n_heads=2, n_ctx=8):
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.pos_embed = nn.Embedding(n_ctx, d_model)
        self.blocks = nn.ModuleList([AttnOnlyBlock(d_model, n_heads)])
        self.unembed = nn.Linear(d_model, d_vocab)
        self.hook_dict = {"blocks.0.hook_resid_pre": self.blocks[0].hook_resid_pre}

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1]).unsqueeze(0)
        residual = self.embed(tokens) + self.pos_embed(positions)
        for block in self.blocks:
            residual = block(residual)
        return self.unembed(residual)

    def run_with_hooks(self, tokens, fwd_hooks=()):
        try:
            for name, hook in fwd_hooks:
                self.hook_dict[name].add_hook(hook)
            out = self.forward(tokens)
        finally:
            for hp in self.hook_dict.values():
                hp.remove_hooks()
        return out


def patch(activations, hook):
    activations[:, -1, :] = 0
    return activations


def main():
    model = HookedTransformer()
    tokens = torch.randint(0, 20, (2, 6))
    logits = model.run_with_hooks(tokens, fwd_hooks=[("blocks.0.hook_resid_pre", patch)])
    metric = F.log_softmax(logits[:, -2], dim=-1)[:, 3].sum()
    metric.backward()
    return logits.detach(), model.embed.weight.grad


logits, embed_grad = main()
