# label: hazard silent no-twin
# why: SAE.forward enforces unit-norm dictionary elements with `self.decoder.weight.data = normalize(self.decoder.weight.data)`; the write through `.data` is invisible to autograd, so the decoder gradient (and the Adam state built from it) ignores the normalisation the forward actually applied.
# source: https://github.com/ApolloResearch/e2e_sae/pull/46
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class SAE(nn.Module):
    """
    Sparse AutoEncoder
    """

    def __init__(self, input_size: int, n_dict_components: int):
        super().__init__()

        self.encoder = nn.Sequential(nn.Linear(input_size, n_dict_components, bias=True), nn.ReLU())
        self.decoder = nn.Linear(n_dict_components, input_size, bias=True)
        self.n_dict_components = n_dict_components
        self.input_size = input_size

        # Initialize so that there are n_dict_components orthonormal vectors
        self.decoder.weight.data = nn.init.orthogonal_(self.decoder.weight.data.T).T

    def forward(self, x):
        c = self.encoder(x)

        # Apply unit norm constraint so that each dictionary component has unit norm
        self.decoder.weight.data = nn.functional.normalize(self.decoder.weight.data, dim=0)  # <-- IPL007

        x_hat = self.decoder(c)
        return x_hat, c


class SAEActs:
    def __init__(self, input, c, output):
        self.input = input
        self.c = c
        self.output = output


def sae_hook(x, hook, sae, hook_acts, hook_key):
    """Runs the SAE on the input and stores the input, output and c in hook_acts under hook_key."""
    output, c = sae(x)
    hook_acts[hook_key] = SAEActs(input=x, c=c, output=output)
    return output


class TinyHookedTransformer(nn.Module):
    """Stand-in for the HookedTransformer: embed, two residual MLP blocks, unembed."""

    def __init__(self, d_vocab=20, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d_model, 16), nn.GELU(), nn.Linear(16, d_model)) for _ in range(2)])
        self.unembed = nn.Linear(d_model, d_vocab)
        for p in self.parameters():
            p.requires_grad_(False)

    def run_with_hooks(self, tokens, fwd_hooks=()):
        hooks = dict(fwd_hooks)
        resid = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            resid = resid + block(resid)
            name = f"blocks.{i}.hook_resid_post"
            if name in hooks:
                resid = hooks[name](resid, hook=None)
        return self.unembed(resid)


class SAETransformer(nn.Module):
    def __init__(self, tlens_model, raw_sae_positions, dict_size_to_input_ratio=4):
        super().__init__()
        self.tlens_model = tlens_model
        self.raw_sae_positions = raw_sae_positions
        self.all_sae_positions = [name.replace(".", "-") for name in raw_sae_positions]
        self.saes = nn.ModuleDict()
        for i in range(len(self.all_sae_positions)):
            input_size = 8
            self.saes[self.all_sae_positions[i]] = SAE(
                input_size=input_size,
                n_dict_components=int(dict_size_to_input_ratio * input_size),
            )

    def forward(self, tokens, sae_positions):
        new_acts = {}
        sae_hooks = [
            (
                sae_pos,
                partial(
                    sae_hook,
                    sae=self.saes[sae_pos.replace(".", "-")],
                    hook_acts=new_acts,
                    hook_key=sae_pos,
                ),
            )
            for sae_pos in sae_positions
        ]
        new_logits = self.tlens_model.run_with_hooks(tokens, fwd_hooks=sae_hooks)
        return new_logits, new_acts


def calc_loss(orig_logits, new_logits, new_acts, sparsity_coeff=1e-2, out_to_in_coeff=1.0, logits_kl_coeff=1.0):
    loss = torch.zeros(1)
    loss = loss + logits_kl_coeff * F.kl_div(
        F.log_softmax(new_logits.flatten(0, 1), dim=-1),
        F.log_softmax(orig_logits.flatten(0, 1), dim=-1),
        log_target=True,
        reduction="batchmean",
    )
    for name, new_act in new_acts.items():
        loss = loss + out_to_in_coeff * F.mse_loss(new_act.input, new_act.output)
        loss = loss + sparsity_coeff * torch.norm(new_act.c, p=1.0, dim=-1).mean()
    return loss


def main():
    tlens_model = TinyHookedTransformer()
    model = SAETransformer(tlens_model, raw_sae_positions=["blocks.0.hook_resid_post"])
    optimizer = torch.optim.Adam(model.saes.parameters(), lr=1e-2)
    tokens = torch.randint(0, 20, (4, 6))
    with torch.no_grad():
        orig_logits = tlens_model.run_with_hooks(tokens)

    for step in range(3):
        optimizer.zero_grad()
        new_logits, new_acts = model(tokens, sae_positions=["blocks.0.hook_resid_post"])
        loss = calc_loss(orig_logits, new_logits, new_acts)
        loss.backward()
        optimizer.step()

    sae = model.saes["blocks-0-hook_resid_post"]
    return loss.detach(), sae.decoder.weight.grad.clone(), sae.encoder[0].weight.detach().clone()


loss, decoder_grad, encoder_weight = main()
