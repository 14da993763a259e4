# label: hazard raises
# why: multihead_attention scales the query in place (`q *= key_size ** -0.5`), but q is one of the views returned by torch.split on the projected qkv, and autograd forbids in-place writes to outputs of multi-view functions (fixed in PR #69 by `q = q * ...`).
# source: https://github.com/williamSYSU/TextGAN-PyTorch/pull/69 (models/relational_rnn_general.py; reported in issue #46)
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class RelationalMemory(nn.Module):
    def __init__(self, mem_slots, head_size, input_size, num_heads=1, num_blocks=1, forget_bias=1., input_bias=0.,
                 attention_mlp_layers=2):
        super(RelationalMemory, self).__init__()
        self.mem_slots = mem_slots
        self.head_size = head_size
        self.num_heads = num_heads
        self.mem_size = self.head_size * self.num_heads
        self.mem_slots_plus_input = self.mem_slots + 1
        self.num_blocks = num_blocks
        self.attention_mlp_layers = attention_mlp_layers
        self.key_size = self.head_size
        self.value_size = self.head_size
        self.qkv_size = 2 * self.key_size + self.value_size
        self.total_qkv_size = self.qkv_size * self.num_heads

        self.qkv_projector = nn.Linear(self.mem_size, self.total_qkv_size)
        self.qkv_layernorm = nn.LayerNorm([self.mem_slots_plus_input, self.total_qkv_size])
        self.attention_mlp = nn.ModuleList([nn.Linear(self.mem_size, self.mem_size)] * self.attention_mlp_layers)
        self.attended_memory_layernorm = nn.LayerNorm([self.mem_slots_plus_input, self.mem_size])
        self.attended_memory_layernorm2 = nn.LayerNorm([self.mem_slots_plus_input, self.mem_size])

        self.input_size = input_size
        self.input_projector = nn.Linear(self.input_size, self.mem_size)

        self.num_gates = 2 * self.mem_size
        self.input_gate_projector = nn.Linear(self.mem_size, self.num_gates)
        self.memory_gate_projector = nn.Linear(self.mem_size, self.num_gates)
        self.forget_bias = nn.Parameter(torch.tensor(forget_bias, dtype=torch.float32))
        self.input_bias = nn.Parameter(torch.tensor(input_bias, dtype=torch.float32))

    def initial_state(self, batch_size):
        init_state = torch.stack([torch.eye(self.mem_slots) for _ in range(batch_size)])
        if self.mem_size > self.mem_slots:
            pad = torch.zeros((batch_size, self.mem_slots, self.mem_size - self.mem_slots))
            init_state = torch.cat([init_state, pad], -1)
        return init_state

    def multihead_attention(self, memory):
        qkv = self.qkv_projector(memory)
        qkv = self.qkv_layernorm(qkv)
        mem_slots = memory.shape[1]
        qkv_reshape = qkv.view(qkv.shape[0], mem_slots, self.num_heads, self.qkv_size)
        qkv_transpose = qkv_reshape.permute(0, 2, 1, 3)
        q, k, v = torch.split(qkv_transpose, [self.key_size, self.key_size, self.value_size], -1)

        q *= (self.key_size ** -0.5)  # <-- IPL001: in-place scale of a view returned by torch.split (multi-output view)

        dot_product = torch.matmul(q, k.permute(0, 1, 3, 2))
        weights = F.softmax(dot_product, dim=-1)
        output = torch.matmul(weights, v)
        output_transpose = output.permute(0, 2, 1, 3).contiguous()
        return output_transpose.view((output_transpose.shape[0], output_transpose.shape[1], -1))

    def create_gates(self, inputs, memory):
        memory = torch.tanh(memory)
        inputs = inputs.view(inputs.shape[0], -1)
        gate_inputs = self.input_gate_projector(inputs).unsqueeze(dim=1)
        gate_memory = self.memory_gate_projector(memory)
        gates = gate_memory + gate_inputs
        input_gate, forget_gate = torch.split(gates, split_size_or_sections=int(gates.shape[2] / 2), dim=2)
        input_gate = torch.sigmoid(input_gate + self.input_bias)
        forget_gate = torch.sigmoid(forget_gate + self.forget_bias)
        return input_gate, forget_gate

    def attend_over_memory(self, memory):
        for _ in range(self.num_blocks):
            attended_memory = self.multihead_attention(memory)
            memory = self.attended_memory_layernorm(memory + attended_memory)
            attention_mlp = memory
            for i, l in enumerate(self.attention_mlp):
                attention_mlp = self.attention_mlp[i](attention_mlp)
                attention_mlp = F.relu(attention_mlp)
            memory = self.attended_memory_layernorm2(memory + attention_mlp)
        return memory

    def forward_step(self, inputs, memory):
        inputs = inputs.view(inputs.shape[0], -1)
        inputs = self.input_projector(inputs)
        inputs_reshape = inputs.unsqueeze(dim=1)
        memory_plus_input = torch.cat([memory, inputs_reshape], dim=1)
        next_memory = self.attend_over_memory(memory_plus_input)
        n = inputs_reshape.shape[1]
        next_memory = next_memory[:, :-n, :]
        input_gate, forget_gate = self.create_gates(inputs_reshape, memory)
        next_memory = input_gate * torch.tanh(next_memory)
        next_memory = next_memory + forget_gate * memory
        output = next_memory.view(next_memory.shape[0], -1)
        return output, next_memory

    def forward(self, inputs, memory):
        memory = memory.detach()
        logits = []
        for idx_step in range(inputs.shape[1]):
            logit, memory = self.forward_step(inputs[:, idx_step], memory)
            logits.append(logit.unsqueeze(1))
        return torch.cat(logits, dim=1), memory


model = RelationalMemory(mem_slots=1, head_size=8, input_size=6, num_heads=2)
memory = model.initial_state(batch_size=3)
inputs = torch.randn(3, 4, 6)
targets = torch.randn(3, 4, 16)
logits, memory = model(inputs, memory)
loss = F.mse_loss(logits, targets)
loss.backward()
