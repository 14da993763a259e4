# label: hazard raises
# why: the refactor changed calc_loss's accumulator from the float `0.0` to `torch.zeros(1, requires_grad=True, device=device)`; with the old `loss += mse_loss(...)` / `loss += norm(...).mean()` lines that is an in-place add on a leaf that requires grad, which autograd rejects on the first SAE training step (the same commit rewrote both as `loss = loss + ...`).
# source: https://github.com/ApolloResearch/e2e_sae/commit/456bbc16702b3880073cf507db0066c982dc5a59
from functools import partial
from typing import Any, Callable, cast

import torch
from torch import nn, Tensor

torch.manual_seed(0)


class SAE(nn.Module):
    """
    Sparse AutoEncoder
    """

    def __init__(self, input_size: int, n_dict_components: int):
        super().__init__()

        self.encoder = nn.Sequential(nn.Linear(input_size, n_dict_components), nn.ReLU())
        self.decoder = nn.Linear(n_dict_components, input_size, bias=False)
        self.n_dict_components = n_dict_components
        self.input_size = input_size

        # Initialize the decoder weights orthogonally
        nn.init.orthogonal_(self.decoder.weight)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.encoder(x)

        # Apply unit norm constraint to the decoder weights
        self.decoder.weight.data = nn.functional.normalize(self.decoder.weight.data, dim=0)

        x_hat = self.decoder(c)
        return x_hat, c


class HookedMLPStack(nn.Module):
    """Stand-in for the TransformerLens model: residual blocks with named hook points."""

    def __init__(self, d_model: int = 8, n_layers: int = 2, vocab: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model)) for _ in range(n_layers)])
        self.hook_names = [f"blocks.{i}.hook_resid_pre" for i in range(n_layers)]

    def run_with_hooks(self, tokens, fwd_hooks=()):
        hooks = dict(fwd_hooks)
        x = self.embed(tokens)
        for name, block in zip(self.hook_names, self.blocks):
            if name in hooks:
                x = hooks[name](x, hook=name)
            x = x + block(x)
        return x

    def run_with_cache(self, tokens, names_filter):
        cache = {}

        def store(value, hook):
            cache.update({hook: value})
            return value

        out = self.run_with_hooks(tokens, [(n, store) for n in self.hook_names if names_filter(n)])
        return out, cache


class SAETransformer(nn.Module):
    def __init__(self, tlens_model, sae_position_name: str, n_dict_components: int):
        super().__init__()
        self.tlens_model = tlens_model
        self.sae_position_name = sae_position_name
        self.saes = nn.ModuleDict({str(i): SAE(8, n_dict_components) for i in range(len(tlens_model.hook_names))})


def sae_hook(
    value: torch.Tensor, hook: Any, sae: SAE, hook_acts: dict[str, Any]
) -> torch.Tensor:
    """Runs the SAE on the input and stores the output and c in hook_acts."""
    output, c = sae(value)
    hook_acts["output"] = output
    hook_acts["c"] = c
    return output


def calc_loss(
    orig_acts: dict[str, Tensor],
    sae_acts: dict[str, dict[str, Tensor]],
    sae_orig: bool,
    sae_sparsity: bool,
    device: torch.device,
) -> Tensor:
    """Compute loss between orig_acts and sae_acts."""
    assert set(orig_acts.keys()) == set(sae_acts.keys()), (
        f"Keys of orig_acts and sae_acts must match, got {orig_acts.keys()} and "
        f"{sae_acts.keys()}"
    )
    loss: Tensor = torch.zeros(1, requires_grad=True, device=device)
    for name, orig_act in orig_acts.items():
        # Convert from inference tensor. TODO: Make more memory efficient
        orig_act = orig_act.clone()
        sae_act = sae_acts[name]
        if sae_orig:
            loss += torch.nn.functional.mse_loss(orig_act, sae_act["output"])  # <-- IPL003
        if sae_sparsity:
            loss += torch.norm(sae_act["c"], p=0.6, dim=-1).mean()  # <-- IPL003
    return loss


def train(model: SAETransformer, device: torch.device, n_steps: int = 3) -> list:
    optimizer = torch.optim.Adam(model.saes.parameters(), lr=1e-3)
    losses = []

    def orig_resid_names(name: str) -> bool:
        return model.sae_position_name in name

    for step in range(n_steps):
        tokens = torch.randint(0, 16, (4, 6), device=device)
        # Run model without SAEs
        with torch.inference_mode():
            orig_acts = model.tlens_model.run_with_cache(tokens, names_filter=orig_resid_names)[1]

        # Run model with SAEs
        sae_acts = {hook_name: {} for hook_name in orig_acts}
        fwd_hooks: list[tuple[str, Callable[..., torch.Tensor]]] = [
            (
                hook_name,
                partial(sae_hook, sae=cast(SAE, model.saes[str(i)]), hook_acts=sae_acts[hook_name]),
            )
            for i, hook_name in enumerate(orig_acts)
        ]
        model.tlens_model.run_with_hooks(tokens, fwd_hooks=fwd_hooks)

        loss = calc_loss(
            orig_acts=orig_acts,
            sae_acts=sae_acts,
            sae_orig=True,
            sae_sparsity=True,
            device=device,
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


def main():
    device = torch.device("cpu")
    tlens_model = HookedMLPStack()
    for p in tlens_model.parameters():
        p.requires_grad_(False)
    model = SAETransformer(tlens_model, sae_position_name="hook_resid_pre", n_dict_components=32)
    losses = train(model, device=device)
    return torch.stack([l.reshape(()) for l in losses]), model.saes["0"].encoder[0].weight.detach().clone()


losses, encoder_weight = main()
