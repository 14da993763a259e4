# label: hazard raises no-twin
# why: with use_cache the attention writes each layer's new num/den/max state back into slices of the shared state tensors, but the CPU recurrence saved views of those same slices (as its initial state) for backward.
# source: https://github.com/huggingface/transformers/issues/23653
import torch
import torch.nn as nn

torch.manual_seed(0)


def rwkv_linear_attention_cpu(time_decay, time_first, key, value, state=None, return_state=False):
    _, seq_length, _ = key.size()
    output = torch.zeros_like(key)
    if state is None:
        num_state = torch.zeros_like(key[:, 0], dtype=torch.float32)
        den_state = torch.zeros_like(key[:, 0], dtype=torch.float32)
        max_state = torch.zeros_like(key[:, 0], dtype=torch.float32) - 1e38
    else:
        num_state, den_state, max_state = state
    time_decay = -torch.exp(time_decay)
    for current_index in range(seq_length):
        current_key = key[:, current_index].float()
        current_value = value[:, current_index]
        max_for_output = torch.maximum(max_state, current_key + time_first)
        e1 = torch.exp(max_state - max_for_output)
        e2 = torch.exp(current_key + time_first - max_for_output)
        numerator = e1 * num_state + e2 * current_value
        denominator = e1 * den_state + e2
        output[:, current_index] = (numerator / denominator).to(output.dtype)
        max_for_state = torch.maximum(max_state + time_decay, current_key)
        e1 = torch.exp(max_state + time_decay - max_for_state)
        e2 = torch.exp(current_key - max_for_state)
        num_state = e1 * num_state + e2 * current_value
        den_state = e1 * den_state + e2
        max_state = max_for_state
    if return_state or state is not None:
        state = [num_state, den_state, max_state]
    return output, state


class RwkvSelfAttention(nn.Module):
    def __init__(self, hidden_size, layer_id=0):
        super().__init__()
        self.layer_id = layer_id
        self.time_decay = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.time_first = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix_key = nn.Parameter(torch.rand(1, 1, hidden_size))
        self.time_mix_value = nn.Parameter(torch.rand(1, 1, hidden_size))
        self.time_mix_receptance = nn.Parameter(torch.rand(1, 1, hidden_size))
        self.key = nn.Linear(hidden_size, hidden_size, bias=False)
        self.value = nn.Linear(hidden_size, hidden_size, bias=False)
        self.receptance = nn.Linear(hidden_size, hidden_size, bias=False)
        self.output = nn.Linear(hidden_size, hidden_size, bias=False)

    def extract_key_value(self, hidden, state=None):
        # Mix hidden with the previous timestep to produce key, value, receptance
        if hidden.size(1) == 1 and state is not None:
            shifted = state[1][:, :, self.layer_id]
        else:
            shifted = self.time_shift(hidden)
            if state is not None:
                shifted[:, 0] = state[1][:, :, self.layer_id]
        key = hidden * self.time_mix_key + shifted * (1 - self.time_mix_key)
        value = hidden * self.time_mix_value + shifted * (1 - self.time_mix_value)
        receptance = hidden * self.time_mix_receptance + shifted * (1 - self.time_mix_receptance)
        key = self.key(key)
        value = self.value(value)
        receptance = torch.sigmoid(self.receptance(receptance))
        if state is not None:
            state[1][:, :, self.layer_id] = hidden[:, -1]
        return receptance, key, value, state

    def forward(self, hidden, state=None, use_cache=False):
        receptance, key, value, state = self.extract_key_value(hidden, state=state)
        layer_state = tuple(s[:, :, self.layer_id] for s in state[2:]) if state is not None else None
        rwkv, layer_state = rwkv_linear_attention_cpu(
            self.time_decay, self.time_first, key, value, state=layer_state, return_state=use_cache,
        )
        if layer_state is not None:
            state[2][:, :, self.layer_id] = layer_state[0]  # <-- IPL001: overwrites the slice the recurrence saved as num_state
            state[3][:, :, self.layer_id] = layer_state[1]  # <-- IPL001: overwrites the slice the recurrence saved as den_state
            state[4][:, :, self.layer_id] = layer_state[2]  # <-- IPL001: overwrites the slice torch.maximum saved as max_state
        return self.output(receptance * rwkv), state


class RwkvFeedForward(nn.Module):
    def __init__(self, hidden_size, intermediate_size, layer_id=0):
        super().__init__()
        self.layer_id = layer_id
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix_key = nn.Parameter(torch.rand(1, 1, hidden_size))
        self.time_mix_receptance = nn.Parameter(torch.rand(1, 1, hidden_size))
        self.key = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.receptance = nn.Linear(hidden_size, hidden_size, bias=False)
        self.value = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, hidden, state=None):
        if hidden.size(1) == 1 and state is not None:
            shifted = state[0][:, :, self.layer_id]
        else:
            shifted = self.time_shift(hidden)
            if state is not None:
                shifted[:, 0] = state[0][:, :, self.layer_id]
        key = hidden * self.time_mix_key + shifted * (1 - self.time_mix_key)
        receptance = hidden * self.time_mix_receptance + shifted * (1 - self.time_mix_receptance)
        key = torch.square(torch.relu(self.key(key)))
        value = self.value(key)
        receptance = torch.sigmoid(self.receptance(receptance))
        if state is not None:
            state[0][:, :, self.layer_id] = hidden[:, -1]
        return receptance * value, state


class RwkvBlock(nn.Module):
    def __init__(self, hidden_size, layer_id):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden_size)
        self.ln2 = nn.LayerNorm(hidden_size)
        self.attention = RwkvSelfAttention(hidden_size, layer_id)
        self.feed_forward = RwkvFeedForward(hidden_size, 4 * hidden_size, layer_id)

    def forward(self, hidden, state=None, use_cache=False):
        attention, state = self.attention(self.ln1(hidden), state=state, use_cache=use_cache)
        hidden = hidden + attention
        feed_forward, state = self.feed_forward(self.ln2(hidden), state=state)
        hidden = hidden + feed_forward
        return hidden, state


class RwkvForCausalLM(nn.Module):
    def __init__(self, vocab_size=20, hidden_size=8, num_hidden_layers=2):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.blocks = nn.ModuleList([RwkvBlock(hidden_size, layer_id=i) for i in range(num_hidden_layers)])
        self.ln_out = nn.LayerNorm(hidden_size)
        self.head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, labels=None, state=None, use_cache=True):
        inputs_embeds = self.embeddings(input_ids)
        if use_cache and state is None:
            shape = (inputs_embeds.size(0), self.hidden_size, self.num_hidden_layers)
            state = [torch.zeros(*shape, dtype=inputs_embeds.dtype if i <= 1 else torch.float32) for i in range(5)]
            state[4] -= 1e30
        hidden_states = inputs_embeds
        for block in self.blocks:
            hidden_states, state = block(hidden_states, state=state, use_cache=use_cache)
        logits = self.head(self.ln_out(hidden_states))
        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = nn.functional.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return loss, logits, state


model = RwkvForCausalLM()
model.eval()  # use_cache stays on, as in the documentation example
input_ids = torch.randint(0, 20, (2, 6))
loss, logits, state = model(input_ids, labels=input_ids)
loss.backward()
