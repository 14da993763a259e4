# label: safe
# why: the fixed LstmCellWithProjection clips with out-of-place torch.clamp, so the clip is part of the graph and the gradients of clipped memory/state entries are correctly zeroed.
# source: https://github.com/allenai/allennlp/commit/7eb44eb212af5ce9c295de6db1704a27d3e4a9bd (allennlp/modules/lstm_cell_with_projection.py after the fix)
from typing import List, Optional, Tuple

import torch

torch.manual_seed(0)


class LstmCellWithProjection(torch.nn.Module):
    def __init__(self, input_size: int, hidden_size: int, cell_size: int, go_forward: bool = True,
                 memory_cell_clip_value: Optional[float] = None,
                 state_projection_clip_value: Optional[float] = None) -> None:
        super(LstmCellWithProjection, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.cell_size = cell_size
        self.go_forward = go_forward
        self.state_projection_clip_value = state_projection_clip_value
        self.memory_cell_clip_value = memory_cell_clip_value
        self.input_linearity = torch.nn.Linear(input_size, 4 * cell_size, bias=False)
        self.state_linearity = torch.nn.Linear(hidden_size, 4 * cell_size, bias=True)
        self.state_projection = torch.nn.Linear(cell_size, hidden_size, bias=False)

    def forward(self, inputs: torch.Tensor, batch_lengths: List[int],
                initial_state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        batch_size = inputs.size()[0]
        total_timesteps = inputs.size()[1]
        output_accumulator = inputs.new_zeros(batch_size, total_timesteps, self.hidden_size)
        full_batch_previous_memory = inputs.new_zeros(batch_size, self.cell_size)
        full_batch_previous_state = inputs.new_zeros(batch_size, self.hidden_size)
        current_length_index = batch_size - 1 if self.go_forward else 0

        for timestep in range(total_timesteps):
            index = timestep if self.go_forward else total_timesteps - timestep - 1
            if self.go_forward:
                while batch_lengths[current_length_index] <= index:
                    current_length_index -= 1
            else:
                while current_length_index < (len(batch_lengths) - 1) and \
                        batch_lengths[current_length_index + 1] > index:
                    current_length_index += 1

            previous_memory = full_batch_previous_memory[0: current_length_index + 1].clone()
            previous_state = full_batch_previous_state[0: current_length_index + 1].clone()
            timestep_input = inputs[0: current_length_index + 1, index]

            projected_input = self.input_linearity(timestep_input)
            projected_state = self.state_linearity(previous_state)

            input_gate = torch.sigmoid(projected_input[:, (0 * self.cell_size):(1 * self.cell_size)] +
                                       projected_state[:, (0 * self.cell_size):(1 * self.cell_size)])
            forget_gate = torch.sigmoid(projected_input[:, (1 * self.cell_size):(2 * self.cell_size)] +
                                        projected_state[:, (1 * self.cell_size):(2 * self.cell_size)])
            memory_init = torch.tanh(projected_input[:, (2 * self.cell_size):(3 * self.cell_size)] +
                                     projected_state[:, (2 * self.cell_size):(3 * self.cell_size)])
            output_gate = torch.sigmoid(projected_input[:, (3 * self.cell_size):(4 * self.cell_size)] +
                                        projected_state[:, (3 * self.cell_size):(4 * self.cell_size)])
            memory = input_gate * memory_init + forget_gate * previous_memory

            if self.memory_cell_clip_value:
                memory = torch.clamp(memory, -self.memory_cell_clip_value, self.memory_cell_clip_value)

            pre_projection_timestep_output = output_gate * torch.tanh(memory)
            timestep_output = self.state_projection(pre_projection_timestep_output)
            if self.state_projection_clip_value:
                timestep_output = torch.clamp(timestep_output,
                                              -self.state_projection_clip_value,
                                              self.state_projection_clip_value)

            full_batch_previous_memory = full_batch_previous_memory.data.clone()
            full_batch_previous_state = full_batch_previous_state.data.clone()
            full_batch_previous_memory[0:current_length_index + 1] = memory
            full_batch_previous_state[0:current_length_index + 1] = timestep_output
            output_accumulator[0:current_length_index + 1, index] = timestep_output

        final_state = (full_batch_previous_state.unsqueeze(0), full_batch_previous_memory.unsqueeze(0))
        return output_accumulator, final_state


def main():
    lstm = LstmCellWithProjection(input_size=6, hidden_size=4, cell_size=8,
                                  memory_cell_clip_value=0.3, state_projection_clip_value=0.2)
    inputs = 2.0 * torch.randn(3, 5, 6)
    batch_lengths = [5, 4, 2]
    outputs, (state, memory) = lstm(inputs, batch_lengths)
    loss = outputs.pow(2).sum() + state.sum()
    loss.backward()
    return loss.detach(), lstm.input_linearity.weight.grad, lstm.state_projection.weight.grad


loss, input_grad, projection_grad = main()
