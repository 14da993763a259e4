# label: hazard raises
# why: the slow path starts the recurrence from the cache's ssm_state tensor itself and finally copy_()s the new state back into it, overwriting the tensor that the first recurrence step saved for backward.
# source: https://github.com/huggingface/transformers/issues/29526 (fixed by https://github.com/huggingface/transformers/pull/29563)
import torch
import torch.nn as nn

torch.manual_seed(0)


class MambaCache:
    def __init__(self, num_layers, batch_size, intermediate_size, ssm_state_size, conv_kernel_size):
        self.seqlen_offset = 0
        self.conv_states = {i: torch.zeros(batch_size, intermediate_size, conv_kernel_size) for i in range(num_layers)}
        self.ssm_states = {i: torch.zeros(batch_size, intermediate_size, ssm_state_size) for i in range(num_layers)}


class MambaMixer(nn.Module):
    def __init__(self, hidden_size=6, intermediate_size=8, ssm_state_size=4, conv_kernel=3, time_step_rank=2, layer_idx=0):
        super().__init__()
        self.layer_idx = layer_idx
        self.intermediate_size = intermediate_size
        self.ssm_state_size = ssm_state_size
        self.conv_kernel_size = conv_kernel
        self.time_step_rank = time_step_rank
        self.in_proj = nn.Linear(hidden_size, intermediate_size * 2)
        self.conv1d = nn.Conv1d(intermediate_size, intermediate_size, conv_kernel, groups=intermediate_size, padding=conv_kernel - 1)
        self.act = nn.SiLU()
        self.x_proj = nn.Linear(intermediate_size, time_step_rank + ssm_state_size * 2, bias=False)
        self.dt_proj = nn.Linear(time_step_rank, intermediate_size)
        A = torch.arange(1, ssm_state_size + 1, dtype=torch.float32)[None, :].expand(intermediate_size, -1).contiguous()
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(intermediate_size))
        self.out_proj = nn.Linear(intermediate_size, hidden_size)

    def slow_forward(self, input_states, cache_params=None):
        batch_size, seq_len, _ = input_states.shape
        dtype = input_states.dtype
        # 1. Gated MLP's linear projection
        projected_states = self.in_proj(input_states).transpose(1, 2)
        hidden_states, gate = projected_states.chunk(2, dim=1)

        # 2. Convolution sequence transformation
        if cache_params is not None:
            ssm_state = cache_params.ssm_states[self.layer_idx]
            conv_state = nn.functional.pad(hidden_states, (self.conv_kernel_size - hidden_states.shape[-1], 0))
            cache_params.conv_states[self.layer_idx].copy_(conv_state.detach())
            hidden_states = self.act(self.conv1d(hidden_states)[..., :seq_len])
        else:
            ssm_state = torch.zeros((batch_size, self.intermediate_size, self.ssm_state_size), dtype=dtype)
            hidden_states = self.act(self.conv1d(hidden_states)[..., :seq_len])

        # 3. State Space Model sequence transformation
        ssm_parameters = self.x_proj(hidden_states.transpose(1, 2))
        time_step, B, C = torch.split(ssm_parameters, [self.time_step_rank, self.ssm_state_size, self.ssm_state_size], dim=-1)
        discrete_time_step = self.dt_proj(time_step)
        discrete_time_step = nn.functional.softplus(discrete_time_step).transpose(1, 2)
        A = -torch.exp(self.A_log.float())
        discrete_A = torch.exp(A[None, :, None, :] * discrete_time_step[:, :, :, None])
        discrete_B = discrete_time_step[:, :, :, None] * B[:, None, :, :].float()
        deltaB_u = discrete_B * hidden_states[:, :, :, None].float()

        # 3.c perform the recurrence y <- SSM(A, B, C)(x)
        scan_outputs = []
        for i in range(seq_len):
            ssm_state = discrete_A[:, :, i, :] * ssm_state + deltaB_u[:, :, i, :]
            scan_output = torch.matmul(ssm_state.to(dtype), C[:, i, :].unsqueeze(-1))
            scan_outputs.append(scan_output[:, :, 0])
        scan_output = torch.stack(scan_outputs, dim=-1)
        scan_output = scan_output + (hidden_states * self.D[None, :, None])
        scan_output = (scan_output * self.act(gate))

        if cache_params is not None:
            cache_params.ssm_states[self.layer_idx].copy_(ssm_state)  # <-- IPL001: the cache tensor is the initial ssm_state that the first recurrence step saved

        # 4. Final linear projection
        contextualized_states = self.out_proj(scan_output.transpose(1, 2))
        return contextualized_states


mixer = MambaMixer()
cache = MambaCache(num_layers=1, batch_size=2, intermediate_size=8, ssm_state_size=4, conv_kernel_size=3)
input_states = torch.randn(2, 5, 6)
out = mixer.slow_forward(input_states, cache_params=cache)
loss = out.pow(2).mean()
loss.backward()
