# label: hazard raises
# why: the ensemble model returns mean from x.chunk(2, dim=2), so adding the state residual into y[:, :, reward_size:] in place modifies a view of a multi-output chunk and autograd raises
# source: https://github.com/opendilab/DI-engine/pull/332 (the in-place line is documented as erroring in https://github.com/opendilab/DI-engine/blob/06803b4e18fa64bbed0fd1d44952242c0c063b0f/ding/world_model/ddppo.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class EnsembleFC(nn.Module):
    def __init__(self, in_features, out_features, ensemble_size):
        super().__init__()
        self.ensemble_size = ensemble_size
        self.weight = nn.Parameter(torch.randn(ensemble_size, in_features, out_features) * 0.2)
        self.bias = nn.Parameter(torch.zeros(ensemble_size, 1, out_features))

    def forward(self, input):
        assert input.shape[0] == self.ensemble_size and len(input.shape) == 3
        return torch.bmm(input, self.weight) + self.bias


class EnsembleModel(nn.Module):
    def __init__(self, state_size, action_size, reward_size, ensemble_size, hidden_size=8):
        super().__init__()
        self.output_dim = state_size + reward_size
        self.nn1 = EnsembleFC(state_size + action_size, hidden_size, ensemble_size)
        self.nn2 = EnsembleFC(hidden_size, self.output_dim * 2, ensemble_size)
        self.max_logvar = nn.Parameter(torch.ones(1, 1, self.output_dim) / 2)
        self.min_logvar = nn.Parameter(-torch.ones(1, 1, self.output_dim) * 10)
        self.swish = Swish()

    def forward(self, x, ret_log_var=False):
        x = self.swish(self.nn1(x))
        x = self.nn2(x)
        mean, logvar = x.chunk(2, dim=2)
        logvar = self.max_logvar - F.softplus(self.max_logvar - logvar)
        logvar = self.min_logvar + F.softplus(logvar - self.min_logvar)
        if ret_log_var:
            return mean, logvar
        return mean, torch.exp(logvar)


class StandardScaler:
    def __init__(self, mu, std):
        self.mu, self.std = mu, std

    def transform(self, data):
        return (data - self.mu) / self.std


def get_batch_jacobian(net, x, noutputs):
    x = x.unsqueeze(1)
    n = x.size()[0]
    x = x.repeat(1, noutputs, 1)
    x.requires_grad_(True)
    y = net(x)
    upstream_gradient = torch.eye(noutputs).reshape(1, noutputs, noutputs).repeat(n, 1, 1)
    return torch.autograd.grad(y, x, upstream_gradient, create_graph=True)[0]


class DDPPOWorldModel:
    def __init__(self, state_size=3, action_size=2, reward_size=1, ensemble_size=2):
        self.state_size, self.action_size, self.reward_size = state_size, action_size, reward_size
        self.ensemble_size = ensemble_size
        self.gradient_model = EnsembleModel(state_size, action_size, reward_size, ensemble_size)
        self.scaler = StandardScaler(torch.zeros(state_size + action_size), torch.ones(state_size + action_size) * 2)

    def _get_jacobian(self, model, train_input_reg):
        def func(x):
            x = x.view(self.ensemble_size, -1, self.state_size + self.action_size)
            state = x[:, :, : self.state_size]
            x = self.scaler.transform(x)
            y, _ = model(x)
            y[:, :, self.reward_size:] += state  # <-- IPL001: y is a view of x.chunk(2, dim=2) inside the model
            return y.view(-1, self.state_size + self.reward_size, self.state_size + self.reward_size)

        train_input_reg = train_input_reg.view(-1, self.state_size + self.action_size)
        jacobian = get_batch_jacobian(func, train_input_reg, self.state_size + self.reward_size)
        return jacobian.view(self.ensemble_size, -1, self.state_size + self.reward_size,
                             self.state_size + self.action_size)


world_model = DDPPOWorldModel()
inputs_reg = torch.randn(2, 5, 5)
neighbor_jacobian_target = torch.randn(2, 5, 4, 5)
jacobian = world_model._get_jacobian(world_model.gradient_model, inputs_reg)
reg_loss = (jacobian - neighbor_jacobian_target).pow(2).mean()
reg_loss.backward()
