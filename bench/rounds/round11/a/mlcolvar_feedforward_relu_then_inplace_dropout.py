# label: hazard raises
# why: the FeedForward builder appends an activation and then nn.Dropout(inplace=True) in the same loop, so the dropout overwrites the ReLU output that ReLU saved for backward.
# source: https://github.com/luigibonati/mlcolvar/issues/118
import torch
import torch.nn as nn

torch.manual_seed(0)


def get_activation(activation):
    if activation == "relu":
        return nn.ReLU(True)
    elif activation == "elu":
        return nn.ELU(True)
    elif activation == "tanh":
        return nn.Tanh()
    elif activation == "shifted_softplus":
        return nn.Softplus()
    return None


def _parse_nn_options(options, n_layers, last_layer_activation):
    if options is None or isinstance(options, (str, float, bool)):
        options = [options] * n_layers
    if not last_layer_activation:
        options = list(options)
        options[-1] = None
    return options


class FeedForward(nn.Module):
    def __init__(self, layers, activation="relu", dropout=None, batchnorm=False, last_layer_activation=False):
        super().__init__()
        self.in_features = layers[0]
        self.out_features = layers[-1]
        n_layers = len(layers) - 1

        activation_list = _parse_nn_options(activation, n_layers, last_layer_activation)
        dropout_list = _parse_nn_options(dropout, n_layers, last_layer_activation)
        batchnorm_list = _parse_nn_options(batchnorm, n_layers, last_layer_activation)

        modules = []
        for i in range(n_layers):
            modules.append(nn.Linear(layers[i], layers[i + 1]))
            activ, drop, norm = activation_list[i], dropout_list[i], batchnorm_list[i]

            if norm:
                modules.append(nn.BatchNorm1d(num_features=layers[i + 1]))
            if activ is not None:
                modules.append(get_activation(activ))
            if drop is not None:
                modules.append(nn.Dropout(p=drop, inplace=True))  # <-- IPL001: in-place dropout on the activation output saved for backward

        self.nn = nn.Sequential(*modules)

    def forward(self, x):
        return self.nn(x)


class DeepTDA(nn.Module):
    def __init__(self, n_states, n_cvs, target_centers, target_sigmas, layers, options=None):
        super().__init__()
        options = options or {}
        self.nn = FeedForward(layers, **options.get("nn", {}))
        self.register_buffer("target_centers", torch.tensor(target_centers))
        self.register_buffer("target_sigmas", torch.tensor(target_sigmas))

    def forward(self, x):
        return self.nn(x)

    def loss_fn(self, z, labels):
        loss = 0
        for i, (mu, sigma) in enumerate(zip(self.target_centers, self.target_sigmas)):
            zi = z[labels == i]
            loss = loss + (zi.mean() - mu) ** 2 + (zi.std() - sigma) ** 2
        return loss


nn_layers = [4, 8, 8, 1]
model = DeepTDA(n_states=2, n_cvs=1, target_centers=[-3.0, 3.0], target_sigmas=[0.2, 0.2],
                layers=nn_layers, options={"nn": {"dropout": [0.2, 0.4, 0.6]}})
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(16, 4)
labels = torch.tensor([0, 1] * 8)
z = model(x)
loss = model.loss_fn(z, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
