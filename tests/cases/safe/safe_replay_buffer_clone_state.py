# label: safe
# why: the env loop stores state.clone() in the replay buffer before overwriting the state tensor in place, so each transition keeps its own observation.
import torch

torch.manual_seed(0)
W = torch.randn(4, 4) * 0.3
state = torch.zeros(4)
buffer = []
for t in range(5):
    action = torch.randint(0, 2, ()).float()
    next_state = torch.tanh(W @ state + action + 0.1 * torch.randn(4))
    reward = next_state.sum()
    buffer.append((state.clone(), action, reward, next_state.clone()))
    state[:] = next_state

states = torch.stack([tr[0] for tr in buffer])
next_states = torch.stack([tr[3] for tr in buffer])
rewards = torch.stack([tr[2] for tr in buffer])
