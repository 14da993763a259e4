# label: hazard raises
# why: ReAgent's masked_softmax does `e_x = torch.exp(mask_min_x)` and then `e_x *= mask`; ExpBackward saves its output, so as soon as the propensities are differentiated (here a propensity-matching loss on the Q-network) backward finds the saved exp result overwritten.
# source: https://github.com/facebookresearch/ReAgent/blob/15e3b6611a314124fe9ac24c27ca5e6c96a09425/reagent/core/torch_utils.py (masked_softmax; used by reagent/evaluation/evaluation_data_page.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(x, mask: float, temperature):
    """Compute softmax values for each sets of scores in x."""
    x = x / temperature
    mask_min_x = x - ((1.0 - mask) * 1e20)
    mask_min_x -= torch.max(mask_min_x, dim=1, keepdim=True)[0]
    e_x = torch.exp(mask_min_x)
    e_x *= mask  # <-- IPL001
    out = e_x / e_x.sum(dim=1, keepdim=True)

    # Set NaN values to 0 (NaN happens when a full mask row is passed in)
    out[out != out] = 0
    return out


class FullyConnectedDQN(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, action_dim))

    def forward(self, state):
        return self.layers(state)


def main():
    state_dim, num_actions, batch = 6, 4, 16
    q_network = FullyConnectedDQN(state_dim, num_actions)
    rl_temperature = 0.5
    states = torch.randn(batch, state_dim)
    possible_actions_mask = (torch.rand(batch, num_actions) > 0.3).float()
    possible_actions_mask[:, 0] = 1.0
    logged_actions = torch.zeros(batch, num_actions)
    logged_actions[torch.arange(batch), 0] = 1.0

    optimal_q_values = q_network(states)
    model_propensities = masked_softmax(optimal_q_values, possible_actions_mask, rl_temperature)
    propensity_loss = -(logged_actions * torch.log(model_propensities + 1e-8)).sum(1).mean()
    propensity_loss.backward()
    return propensity_loss.detach(), q_network.layers[0].weight.grad


loss, grad = main()
