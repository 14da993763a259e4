# label: hazard raises
# why: with stateful=True the RNN feeds its state Variable's tensor as the initial state, the first step's matmul saves it, and call() then writes the final states back into that same storage with Variable.assign (copy_), so backward finds the saved initial state at a newer version.
# source: https://github.com/keras-team/keras/issues/20875
import torch

torch.manual_seed(0)


class Variable:
    """Reduced keras torch-backend Variable: assign() copies into the same storage."""

    def __init__(self, initial_value, trainable=True):
        self._value = torch.nn.Parameter(initial_value.clone(), requires_grad=trainable)
        self.trainable = trainable

    @property
    def value(self):
        return self._value

    def assign(self, value):
        with torch.no_grad():
            self._value.copy_(value)  # <-- IPL001


def convert_to_tensor(x):
    return x.value if isinstance(x, Variable) else x


def rnn(step_function, inputs, initial_states):
    states = initial_states
    outputs = []
    for t in range(inputs.shape[1]):
        output, states = step_function(inputs[:, t], states)
        outputs.append(output)
    return outputs[-1], torch.stack(outputs, dim=1), states


class SimpleRNNCell:
    def __init__(self, input_dim, units):
        self.units = units
        self.kernel = Variable(torch.randn(input_dim, units) * 0.3)
        self.recurrent_kernel = Variable(torch.randn(units, units) * 0.3)
        self.bias = Variable(torch.zeros(units))

    def __call__(self, inputs, states):
        prev_output = states[0]
        h = torch.matmul(inputs, self.kernel.value) + self.bias.value
        output = torch.tanh(h + torch.matmul(prev_output, self.recurrent_kernel.value))
        return output, [output]


class RNN:
    def __init__(self, cell, batch_size, stateful=False):
        self.cell = cell
        self.stateful = stateful
        self.states = [Variable(torch.zeros(batch_size, cell.units), trainable=False)]

    def inner_loop(self, sequences, initial_state):
        def step(inputs, states):
            output, new_states = self.cell(inputs, states)
            return output, new_states

        return rnn(step, sequences, initial_state)

    def __call__(self, sequences):
        initial_state = self.states if self.stateful else [torch.zeros(sequences.shape[0], self.cell.units)]
        initial_state = [convert_to_tensor(x) for x in initial_state]
        last_output, outputs, states = self.inner_loop(sequences, initial_state)
        if self.stateful:
            for self_state, state in zip(self.states, states):
                self_state.assign(state)
        return last_output


def main():
    batch_size, time_steps, num_features = 8, 5, 3
    cell = SimpleRNNCell(num_features, 6)
    layer = RNN(cell, batch_size, stateful=True)
    dense_w = torch.randn(6, 1, requires_grad=True)
    params = [cell.kernel.value, cell.recurrent_kernel.value, cell.bias.value, dense_w]
    optimizer = torch.optim.SGD(params, lr=0.01)
    for _ in range(2):
        x = torch.randn(batch_size, time_steps, num_features)
        y = torch.randn(batch_size, 1)
        loss = ((layer(x) @ dense_w - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach(), cell.recurrent_kernel.value.detach().clone()


loss, recurrent_kernel = main()
