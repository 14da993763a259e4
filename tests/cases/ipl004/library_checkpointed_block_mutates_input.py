# label: hazard raises
# why: a DiT-style block adds the timestep projection in place to its `hidden_states` argument, and the block runs under torch.utils.checkpoint, whose recomputation replays the write on the already-modified input.
import torch
import torch.nn as nn
import torch.utils.checkpoint


class DiTBlock(nn.Module):
    def __init__(self, dim, temb_dim):
        super().__init__()
        self.time_proj = nn.Linear(temb_dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states, temb):
        hidden_states += self.time_proj(temb)[:, None, :]  # <-- IPL004: argument written inside a checkpointed function
        ff_output = self.ff(self.norm(hidden_states))
        return hidden_states + ff_output


class DiT(nn.Module):
    def __init__(self, in_dim=4, dim=8, temb_dim=3, depth=2):
        super().__init__()
        self.proj_in = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([DiTBlock(dim, temb_dim) for _ in range(depth)])
        self.proj_out = nn.Linear(dim, in_dim)
        self.gradient_checkpointing = True

    def forward(self, x, temb):
        hidden_states = self.proj_in(x)
        for block in self.blocks:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(block, hidden_states, temb, use_reentrant=False)
            else:
                hidden_states = block(hidden_states, temb)
        return self.proj_out(hidden_states)


torch.manual_seed(0)
model = DiT()
latents = torch.randn(2, 5, 4)
temb = torch.randn(2, 3)
pred = model(latents, temb)
loss = nn.functional.mse_loss(pred, torch.randn_like(pred))
loss.backward()
