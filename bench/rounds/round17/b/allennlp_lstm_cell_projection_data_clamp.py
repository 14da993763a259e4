# label: hazard silent
# why: the memory cell and projected output are clipped through .data.clamp_(), so the forward values are clipped but autograd never sees the clamp and back-propagates through the clipped entries as if they were not clipped.
# source: https://github.com/allenai/allennlp/commit/ca6e72e3b7cd0b119b0eb36c37d4a45da06b81d1
import torch
from torch.autograd import Variable

torch.manual_seed(0)


class LstmCellWithProjection(torch.nn.Module):
    def __init__(self, input_size, hidden_size, cell_size, go_forward=True,
                 memory_cell_clip_value=None, state_projection_clip_value=None):
        super().__init__()
        self.input_size, self.hidden_size, self.cell_size = input_size, hidden_size, cell_size
        self.go_forward = go_forward
        self.memory_cell_clip_value = memory_cell_clip_value
        self.state_projection_clip_value = state_projection_clip_value
        self.input_linearity = torch.nn.Linear(input_size, 4 * cell_size, bias=False)
        self.state_linearity = torch.nn.Linear(hidden_size, 4 * cell_size, bias=True)
        self.state_projection = torch.nn.Linear(cell_size, hidden_size, bias=False)

    def forward(self, inputs, batch_lengths, initial_state=None):
        batch_size = inputs.size()[0]
        total_timesteps = inputs.size()[1]
        output_accumulator = Variable(inputs.data.new(batch_size, total_timesteps, self.hidden_size).fill_(0))
        if initial_state is None:
            full_batch_previous_memory = Variable(inputs.data.new(batch_size, self.cell_size).fill_(0))
            full_batch_previous_state = Variable(inputs.data.new(batch_size, self.hidden_size).fill_(0))
        else:
            full_batch_previous_state = initial_state[0].squeeze(0)
            full_batch_previous_memory = initial_state[1].squeeze(0)
        current_length_index = batch_size - 1 if self.go_forward else 0
        c = self.cell_size
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
            timestep_input = inputs[0: current_length_index + 1, index]
            projected_input = self.input_linearity(timestep_input)
            projected_state = self.state_linearity(previous_state)
            input_gate = torch.sigmoid(projected_input[:, (0 * c):(1 * c)] + projected_state[:, (0 * c):(1 * c)])
            forget_gate = torch.sigmoid(projected_input[:, (1 * c):(2 * c)] + projected_state[:, (1 * c):(2 * c)])
            memory_init = torch.tanh(projected_input[:, (2 * c):(3 * c)] + projected_state[:, (2 * c):(3 * c)])
            output_gate = torch.sigmoid(projected_input[:, (3 * c):(4 * c)] + projected_state[:, (3 * c):(4 * c)])
            memory = input_gate * memory_init + forget_gate * previous_memory
            if self.memory_cell_clip_value:
                memory.data.clamp_(-self.memory_cell_clip_value, self.memory_cell_clip_value)  # <-- IPL007: clips through .data, the clamp is invisible to autograd
            pre_projection_timestep_output = output_gate * torch.tanh(memory)
            timestep_output = self.state_projection(pre_projection_timestep_output)
            if self.state_projection_clip_value:
                timestep_output.data.clamp_(-self.state_projection_clip_value,  # <-- IPL007: clips through .data, the clamp is invisible to autograd
                                            self.state_projection_clip_value)
            full_batch_previous_memory = Variable(full_batch_previous_memory.data.clone())
            full_batch_previous_state = Variable(full_batch_previous_state.data.clone())
            full_batch_previous_memory[0:current_length_index + 1] = memory
            full_batch_previous_state[0:current_length_index + 1] = timestep_output
            output_accumulator[0:current_length_index + 1, index] = timestep_output
        final_state = (full_batch_previous_state.unsqueeze(0), full_batch_previous_memory.unsqueeze(0))
        return output_accumulator, final_state


cell = LstmCellWithProjection(input_size=3, hidden_size=4, cell_size=6,
                              memory_cell_clip_value=0.05, state_projection_clip_value=0.1)
inputs = torch.randn(3, 4, 3) * 3
outputs, (state, memory) = cell(inputs, [4, 3, 2])
loss = outputs.pow(2).sum()
loss.backward()
