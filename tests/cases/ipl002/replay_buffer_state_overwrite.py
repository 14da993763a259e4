# label: hazard silent
# why: the env loop writes the next observation into the same state tensor that was just appended to the replay buffer, so every stored transition ends up holding the final state.
import torch

torch.manual_seed(0)
W = torch.randn(4, 4) * 0.3
state = torch.zeros(4)
buffer = []
for t in range(5):
    action = torch.randint(0, 2, ()).float()
    next_state = torch.tanh(W @ state + action + 0.1 * torch.randn(4))
    reward = next_state.sum()
    buffer.append((state, action, reward, next_state))
    state[:] = next_state  # <-- IPL002: the buffer still holds this tensor as the previous state

states = torch.stack([tr[0] for tr in buffer])
next_states = torch.stack([tr[3] for tr in buffer])
rewards = torch.stack([tr[2] for tr in buffer])
