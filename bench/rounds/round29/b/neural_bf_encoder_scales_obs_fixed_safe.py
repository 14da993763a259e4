# label: safe
# why: the fix scales the observations out of place (o = 0.1 * o), so the caller's observation tensor is untouched and h() and u_() both encode the same 0.1-scaled observations.
# source: https://github.com/MIT-REALM/neural_clbf/commit/2a5f6b96aef937e94b3fa1fc23ebec5c54662714
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LidarRobot:
    n_dims = 3
    n_controls = 2
    obs_dim = 2
    n_obs = 8

    def __init__(self):
        self.obstacles = torch.randn(self.n_obs, 2) * 2.0
        self.control_limits = (torch.tensor([1.0, 1.0]), torch.tensor([-1.0, -1.0]))

    def get_observations(self, x):
        rel = self.obstacles.unsqueeze(0) - x[:, :2].unsqueeze(1)  # bs x n_obs x 2
        return rel.transpose(1, 2)  # bs x obs_dim x n_obs

    def u_nominal(self, x):
        return -0.5 * x[:, :2]

    def zero_order_hold(self, x, u, controller_period):
        xdot = torch.cat([u, torch.zeros(x.shape[0], 1)], dim=1)
        return x + controller_period * xdot


class NeuralObsBFController(nn.Module):
    def __init__(self, dynamics_model, encoder_hidden_layers=1, encoder_hidden_size=16,
                 h_hidden_size=16, controller_period=0.1, h_alpha=0.9):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.controller_period = controller_period
        self.h_alpha = h_alpha
        self.input_size = dynamics_model.obs_dim
        self.encoder_hidden_size = encoder_hidden_size
        self.encoder_layers = OrderedDict()
        self.encoder_layers["input_linear"] = nn.Conv1d(self.input_size, encoder_hidden_size, 1)
        self.encoder_layers["input_activation"] = nn.ReLU()
        for i in range(encoder_hidden_layers):
            self.encoder_layers[f"layer_{i}_linear"] = nn.Conv1d(encoder_hidden_size, encoder_hidden_size, 1)
            self.encoder_layers[f"layer_{i}_activation"] = nn.ReLU()
        self.encoder_nn = nn.Sequential(self.encoder_layers)
        self.h_nn = nn.Sequential(nn.Linear(encoder_hidden_size, h_hidden_size), nn.Tanh(),
                                  nn.Linear(h_hidden_size, 1))
        self.u_nn = nn.Sequential(nn.Linear(encoder_hidden_size + 1, h_hidden_size), nn.Tanh(),
                                  nn.Linear(h_hidden_size, dynamics_model.n_controls))

    def get_observations(self, x):
        return self.dynamics_model.get_observations(x)

    def encoder(self, o):
        # First, scale the observations
        o = 0.1 * o
        e = self.encoder_nn(o)
        e, _ = e.max(dim=-1)
        return e

    def h(self, o):
        encoded_obs = self.encoder(o)
        return self.h_nn(encoded_obs)

    def u_obs(self, x, o, h):
        u_nominal = self.dynamics_model.u_nominal(x)
        decision = 0.5
        encoded_obs = self.encoder(o)
        encoded_obs_w_h = torch.cat((encoded_obs, h), 1)
        u_learned = self.u_nn(encoded_obs_w_h)
        u_upper, u_lower = self.dynamics_model.control_limits
        u_range = (u_upper - u_lower) / 2.0
        u_center = (u_upper + u_lower) / 2.0
        u_learned = u_learned * u_range + u_center
        u = (1 - decision) * u_nominal + decision * u_learned
        return torch.clamp(u, u_lower, u_upper)

    def descent_loss(self, x, o):
        loss = []
        eps = 0.01
        h_t = self.h(o)
        u_t = self.u_obs(x, o, h_t)
        x_tplus1 = self.dynamics_model.zero_order_hold(x, u_t, self.controller_period)
        o_tplus1 = self.get_observations(x_tplus1)
        h_tplus1 = self.h(o_tplus1)
        adjusted_alpha = self.controller_period * self.h_alpha
        barrier_function_violation = h_tplus1 - (1 - adjusted_alpha) * h_t
        barrier_function_violation = F.relu(eps + barrier_function_violation)
        loss.append(("Barrier descent loss", 1e1 * barrier_function_violation.mean()))
        return loss


def main():
    controller = NeuralObsBFController(LidarRobot())
    x = torch.randn(16, 3)
    o = controller.get_observations(x)
    component_losses = dict(controller.descent_loss(x, o))
    total_loss = sum(component_losses.values())
    total_loss.backward()
    return total_loss.detach(), controller.u_nn[0].weight.grad, controller.encoder_nn[0].weight.grad


total_loss, u_grad, enc_grad = main()
