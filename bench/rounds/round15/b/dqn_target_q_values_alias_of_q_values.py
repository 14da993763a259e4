# label: hazard silent
# why: target_q_values is the same tensor as q_values, so writing the TD target into it in place also overwrites the prediction; the MSE between them is then 0 and the network gets no learning signal.
# source: https://ai.stackexchange.com/questions/26154/what-is-the-target-output-for-updating-a-deep-q-network
import torch
import torch.nn as nn

torch.manual_seed(0)


class QNet(nn.Module):
    def __init__(self, state_dim, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, 16)
        self.fc2 = nn.Linear(16, n_actions)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def reward(state):
    return -state.pow(2).sum()


def env_step(state, action):
    return state + 0.1 * (action - 1)


model = QNet(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
gamma = 0.9
state = torch.randn(3)
losses = []

for step in range(3):
    q_values = model(state)
    action = int(torch.argmax(q_values))
    next_state = env_step(state, action)
    next_q_values = model(next_state)
    max_next_q = torch.max(next_q_values)

    target_q_values = q_values
    target_q_values[action] = reward(next_state) + gamma * max_next_q  # <-- IPL002: target_q_values aliases q_values, so the prediction itself is overwritten

    loss = nn.functional.mse_loss(q_values, target_q_values)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    state = next_state.detach()

loss_history = torch.stack(losses)
final_q = model(state).detach()
