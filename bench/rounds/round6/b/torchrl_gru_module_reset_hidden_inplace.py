# label: hazard raises
# why: GRUModule zeroes `hidden[is_init]` in place; in single-step mode the python GRU cell's F.linear saved a view of that same tensordict entry during the previous call, so the second call breaks the first call's backward
# source: https://github.com/pytorch/rl/issues/1742 (fixed in PR #1732 by replacing `hidden[is_init] = 0` with torch.where)
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class GRU(nn.GRU):
    """A module that runs multiple steps of a multi-layer GRU network and is only coded in Python."""

    @staticmethod
    def _gru_cell(x, hx, weight_ih, bias_ih, weight_hh, bias_hh):
        x = x.view(-1, x.size(1))

        gate_x = F.linear(x, weight_ih, bias_ih)
        gate_h = F.linear(hx, weight_hh, bias_hh)

        i_r, i_i, i_n = gate_x.chunk(3, 1)
        h_r, h_i, h_n = gate_h.chunk(3, 1)

        resetgate = (i_r + h_r).sigmoid()
        inputgate = (i_i + h_i).sigmoid()
        newgate = (i_n + (resetgate * h_n)).tanh()

        hy = newgate + inputgate * (hx - newgate)

        return hy

    def _gru(self, x, hx):
        bs, seq_len, input_size = x.size()
        h_t = list(hx.unbind(0))

        outputs = []
        for t in range(seq_len):
            x_t = x[:, t, :]
            for layer in range(self.num_layers):
                weights = self._all_weights[layer]
                weight_ih = getattr(self, weights[0])
                weight_hh = getattr(self, weights[1])
                bias_ih = getattr(self, weights[2])
                bias_hh = getattr(self, weights[3])
                h_t[layer] = self._gru_cell(
                    x_t, h_t[layer], weight_ih, bias_ih, weight_hh, bias_hh
                )
                x_t = h_t[layer]
            outputs.append(x_t)

        outputs = torch.stack(outputs, dim=1)
        return outputs, torch.stack(h_t, 0)

    def forward(self, input, hx=None):  # noqa: F811
        return self._gru(input, hx)


class GRUModule(nn.Module):
    def __init__(self, input_size, hidden_size, in_keys, out_keys):
        super().__init__()
        self.gru = GRU(input_size, hidden_size, num_layers=1, batch_first=True)
        self.in_keys = in_keys
        self.out_keys = out_keys
        self.recurrent_mode = False

    def forward(self, tensordict):
        # single-step mode: [B] -> [B, 1]
        tensordict_shaped = {k: v.reshape(-1, *v.shape[1:]).unsqueeze(1) for k, v in tensordict.items()}
        is_init = tensordict_shaped["is_init"].squeeze(-1)
        value, hidden = (tensordict_shaped[key] for key in self.in_keys)
        batch, steps = value.shape[:2]
        if is_init.any() and hidden is not None:
            hidden[is_init] = 0  # <-- IPL001: `hidden` aliases the tensordict entry whose view the previous call's GRU cell saved
        val, hidden = self._gru(value, batch, steps, hidden)
        tensordict[self.out_keys[0]] = val.squeeze(1)
        tensordict[self.out_keys[1]] = hidden.squeeze(1)
        return tensordict

    def _gru(self, input, batch, steps, hidden_in):
        # we only need the first hidden state
        _hidden_in = hidden_in[:, 0]
        hidden = _hidden_in.transpose(-3, -2).contiguous()
        y, hidden = self.gru(input, hidden)
        hidden = hidden.transpose(0, 1)
        hidden = torch.stack([torch.zeros_like(hidden) for _ in range(steps - 1)] + [hidden], 1)
        return y, hidden


gru_module = GRUModule(4, 6, in_keys=["embed", "recurrent_state"], out_keys=["features", ("next", "recurrent_state")])
head = nn.Linear(6, 2)

# a batch sampled from the replay buffer: the recurrent states were stored by the collector
batch = {
    "embed": torch.randn(5, 4),
    "recurrent_state": torch.randn(5, 1, 6),
    "is_init": torch.tensor([[True], [False], [False], [True], [False]]),
}

# SAC-style loss: the actor is evaluated on the same tensordict for two loss terms
actor_loss = head(gru_module(batch)["features"]).pow(2).mean()
value_loss = head(gru_module(batch)["features"]).sum()
loss = actor_loss + value_loss
loss.backward()
