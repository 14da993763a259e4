# label: safe
# why: the reporter's fix rebinds the scaled widths/heights out of place, so the ReLU output saved for backward stays intact
# source: https://github.com/bayesiains/nflows/issues/89
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransformNet(nn.Module):
    def __init__(self, in_features, out_features, hidden_features):
        super().__init__()
        self.hidden_features = hidden_features
        self.initial_layer = nn.Linear(in_features, hidden_features)
        self.final_layer = nn.Linear(hidden_features, out_features)

    def forward(self, inputs):
        temps = torch.tanh(self.initial_layer(inputs))
        return F.relu(self.final_layer(temps))


class PiecewiseRationalQuadraticCouplingTransform(nn.Module):
    def __init__(self, features, num_bins=4):
        super().__init__()
        self.num_bins = num_bins
        self.identity_features = features // 2
        self.transform_features = features - self.identity_features
        self.transform_net = TransformNet(
            self.identity_features,
            self.transform_features * self._transform_dim_multiplier(),
            hidden_features=8,
        )

    def _transform_dim_multiplier(self):
        return self.num_bins * 3 - 1

    def _coupling_transform(self, inputs, transform_params):
        b, d = inputs.shape
        transform_params = transform_params.reshape(b, d, self._transform_dim_multiplier())
        unnormalized_widths = transform_params[..., : self.num_bins]
        unnormalized_heights = transform_params[..., self.num_bins: 2 * self.num_bins]
        unnormalized_derivatives = transform_params[..., 2 * self.num_bins:]

        if hasattr(self.transform_net, "hidden_features"):
            unnormalized_widths = unnormalized_widths / np.sqrt(self.transform_net.hidden_features)
            unnormalized_heights = unnormalized_heights / np.sqrt(self.transform_net.hidden_features)

        widths = torch.softmax(unnormalized_widths, dim=-1)
        heights = torch.softmax(unnormalized_heights, dim=-1)
        derivs = F.softplus(unnormalized_derivatives)
        outputs = inputs * (widths * heights).sum(-1) + derivs.mean(-1)
        logabsdet = torch.log((widths * heights).sum(-1)).sum(-1)
        return outputs, logabsdet

    def forward(self, inputs):
        identity_split = inputs[:, : self.identity_features]
        transform_split = inputs[:, self.identity_features:]
        transform_params = self.transform_net(identity_split)
        transform_split, logabsdet = self._coupling_transform(transform_split, transform_params)
        outputs = torch.cat([identity_split, transform_split], dim=1)
        return outputs, logabsdet


flow = PiecewiseRationalQuadraticCouplingTransform(features=4)
x = torch.randn(6, 4)
z, logabsdet = flow(x)
loss = -(-0.5 * z.pow(2).sum(1) + logabsdet).mean()
loss.backward()
