# label: safe
# why: the fixed AugmentedLstm clones the full-batch state (keeping it in the graph) before writing the active rows in place, and the output accumulator is a fresh zeros buffer, so no saved tensor is overwritten.
# source: https://github.com/allenai/allennlp/commit/32defc3b60e97ae171d779482cc4023fecd01bfa
import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)


class AugmentedLstm(torch.nn.Module):
    def __init__(self, input_size, hidden_size, go_forward=True, use_highway=True):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.go_forward, self.use_highway = go_forward, use_highway
        if use_highway:
            self.input_linearity = torch.nn.Linear(input_size, 6 * hidden_size, bias=False)
            self.state_linearity = torch.nn.Linear(hidden_size, 5 * hidden_size, bias=True)
        else:
            self.input_linearity = torch.nn.Linear(input_size, 4 * hidden_size, bias=False)
            self.state_linearity = torch.nn.Linear(hidden_size, 4 * hidden_size, bias=True)

    def forward(self, inputs, initial_state=None):
        sequence_tensor, batch_lengths = pad_packed_sequence(inputs, batch_first=True)
        batch_size = sequence_tensor.size()[0]
        total_timesteps = sequence_tensor.size()[1]
        output_accumulator = sequence_tensor.new_zeros(batch_size, total_timesteps, self.hidden_size)
        if initial_state is None:
            full_batch_previous_memory = sequence_tensor.new_zeros(batch_size, self.hidden_size)
            full_batch_previous_state = sequence_tensor.new_zeros(batch_size, self.hidden_size)
        else:
            full_batch_previous_state = initial_state[0].squeeze(0)
            full_batch_previous_memory = initial_state[1].squeeze(0)
        current_length_index = batch_size - 1 if self.go_forward else 0
        h = self.hidden_size
        for timestep in range(total_timesteps):
            index = timestep if self.go_forward else total_timesteps - timestep - 1
            if self.go_forward:
                while batch_lengths[current_length_index] <= index:
                    current_length_index -= 1
            else:
                while current_length_index < (len(batch_lengths) - 1) and batch_lengths[current_length_index + 1] > index:
                    current_length_index += 1
            previous_memory = full_batch_previous_memory[0: current_length_index + 1].clone()
            previous_state = full_batch_previous_state[0: current_length_index + 1].clone()
            timestep_input = sequence_tensor[0: current_length_index + 1, index]
            projected_input = self.input_linearity(timestep_input)
            projected_state = self.state_linearity(previous_state)
            input_gate = torch.sigmoid(projected_input[:, 0 * h:1 * h] + projected_state[:, 0 * h:1 * h])
            forget_gate = torch.sigmoid(projected_input[:, 1 * h:2 * h] + projected_state[:, 1 * h:2 * h])
            memory_init = torch.tanh(projected_input[:, 2 * h:3 * h] + projected_state[:, 2 * h:3 * h])
            output_gate = torch.sigmoid(projected_input[:, 3 * h:4 * h] + projected_state[:, 3 * h:4 * h])
            memory = input_gate * memory_init + forget_gate * previous_memory
            timestep_output = output_gate * torch.tanh(memory)
            if self.use_highway:
                highway_gate = torch.sigmoid(projected_input[:, 4 * h:5 * h] + projected_state[:, 4 * h:5 * h])
                highway_input_projection = projected_input[:, 5 * h:6 * h]
                timestep_output = highway_gate * timestep_output + (1 - highway_gate) * highway_input_projection
            full_batch_previous_memory = full_batch_previous_memory.clone()
            full_batch_previous_state = full_batch_previous_state.clone()
            full_batch_previous_memory[0:current_length_index + 1] = memory
            full_batch_previous_state[0:current_length_index + 1] = timestep_output
            output_accumulator[0:current_length_index + 1, index] = timestep_output
        output_accumulator = pack_padded_sequence(output_accumulator, batch_lengths, batch_first=True)
        final_state = (full_batch_previous_state.unsqueeze(0), full_batch_previous_memory.unsqueeze(0))
        return output_accumulator, final_state


lstm = AugmentedLstm(input_size=4, hidden_size=5)
tokens = torch.randn(3, 4, 4)
lengths = torch.tensor([4, 3, 1])
packed = pack_padded_sequence(tokens, lengths, batch_first=True)
output, (state, memory) = lstm(packed)
padded, _ = pad_packed_sequence(output, batch_first=True)
loss = padded.pow(2).sum() + state.sum() + memory.sum()
loss.backward()
