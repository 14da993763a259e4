# label: hazard silent
# why: the hook zeroes z[:] in place, but z is a slice/expand view of W_pos, so the model's positional-embedding parameter is wiped for every later run.
# source: https://github.com/TransformerLensOrg/TransformerLens/issues/157
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_grad_enabled(False)


class HookPoint(nn.Module):
    """Identity module that exists so hooks can be attached to activations."""

    def __init__(self):
        super().__init__()
        self.fwd_hooks = []

    def add_hook(self, hook):
        def full_hook(module, module_input, module_output):
            return hook(module_output, hook=self)

        self.fwd_hooks.append(self.register_forward_hook(full_hook))

    def remove_hooks(self):
        for h in self.fwd_hooks:
            h.remove()
        self.fwd_hooks = []

    def forward(self, x):
        return x


class PosEmbed(nn.Module):
    def __init__(self, n_ctx, d_model):
        super().__init__()
        self.W_pos = nn.Parameter(torch.randn(n_ctx, d_model))

    def forward(self, tokens, past_kv_pos_offset=0):
        tokens_length = tokens.size(-1)
        pos_embed = self.W_pos[past_kv_pos_offset : tokens_length + past_kv_pos_offset, :]
        return pos_embed.unsqueeze(0).expand(tokens.size(0), -1, -1)


class TinyHookedTransformer(nn.Module):
    def __init__(self, d_vocab=11, n_ctx=8, d_model=4):
        super().__init__()
        self.W_E = nn.Parameter(torch.randn(d_vocab, d_model))
        self.pos_embed = PosEmbed(n_ctx, d_model)
        self.hook_embed = HookPoint()
        self.hook_pos_embed = HookPoint()
        self.unembed = nn.Linear(d_model, d_vocab)
        self.mod_dict = {"hook_embed": self.hook_embed, "hook_pos_embed": self.hook_pos_embed}

    def forward(self, tokens):
        embed = self.hook_embed(self.W_E[tokens])
        pos = self.hook_pos_embed(self.pos_embed(tokens))
        return self.unembed(embed + pos)

    def run_with_hooks(self, tokens, fwd_hooks=()):
        for name, hook in fwd_hooks:
            self.mod_dict[name].add_hook(hook)
        out = self(tokens)
        self.reset_hooks()
        return out

    def reset_hooks(self):
        for hp in self.mod_dict.values():
            hp.remove_hooks()


def sketchy_remove_pos_embed(z, hook):
    z[:] = 0.0  # <-- IPL004, IPL002: writes through a view of W_pos that the model reads on every later call
    return z


model = TinyHookedTransformer()
tokens = torch.tensor([[1, 2, 3, 4]])
ablated_logits = model.run_with_hooks(tokens, fwd_hooks=[("hook_pos_embed", sketchy_remove_pos_embed)])
clean_logits = model(tokens)
