# label: hazard silent
# why: normalize_inputs normalises the state tensor with -= and /= in place, so get_grad_vid (called first for the saliency video) silently normalises the caller's inputs['state'], and the policy then normalises it a second time.
# source: https://github.com/Atcold/pytorch-PPUU/commit/8b3d4d64873a7e3cb4a15fe00c9db69a0488c9ec
import torch
import torch.nn as nn

torch.manual_seed(0)


def normalize_inputs(images, states, stats, device='cpu'):
    images = images.clone().float().div_(255.0)
    states -= stats['s_mean'].view(1, 4).expand(states.size())  # <-- IPL004: normalises the caller's state tensor in place
    states /= stats['s_std'].view(1, 4).expand(states.size())  # <-- IPL004: same
    if images.dim() == 4:
        images = images.to(device).unsqueeze(0)
        states = states.to(device).unsqueeze(0)
    return images, states


def proximity_cost(images, states):
    green = images[:, :, 1]
    return (green * (1.0 + states[:, :, :2].abs().sum(-1, keepdim=True)[..., None])).mean(dim=(-1, -2)).squeeze(-1)


def lane_cost(images):
    red = images[:, :, 0]
    return red.mean(dim=(-1, -2)).squeeze(-1)


class PolicyNet(nn.Module):
    def __init__(self, stats):
        super().__init__()
        self.stats = stats
        self.encoder = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU(), nn.Flatten())
        self.fc = nn.Linear(4 * 4 * 4 + 4, 2)

    def forward(self, input_images, input_states):
        input_images, input_states = normalize_inputs(input_images, input_states, self.stats)
        h = self.encoder(input_images[:, -1])
        return self.fc(torch.cat([h, input_states[:, -1]], 1))


class ForwardModel(nn.Module):
    def __init__(self, stats):
        super().__init__()
        self.policy_net = PolicyNet(stats)
        self.stats = stats


def get_grad_vid(model, input_images, input_states):
    input_images, input_states = normalize_inputs(input_images, input_states, model.policy_net.stats)
    input_images, input_states = input_images.clone(), input_states.clone()
    input_images.requires_grad = True
    input_states.requires_grad = True
    input_images.retain_grad()
    input_states.retain_grad()
    proximity_loss = torch.mean(proximity_cost(input_images[:, -1:], input_states.data[:, -1:]))
    lane_loss = torch.mean(lane_cost(input_images[:, -1:]))
    loss = proximity_loss + 0.2 * lane_loss
    loss.backward()
    return input_images.grad[:, -1].abs().clamp(max=1.)


stats = {'s_mean': torch.tensor([1.0, 2.0, 0.5, 0.5]), 's_std': torch.tensor([2.0, 3.0, 1.0, 1.0])}
forward_model = ForwardModel(stats)
inputs = {'context': torch.randint(0, 255, (3, 3, 8, 8)).float(), 'state': torch.randn(3, 4) * 3 + 1}

grad_list = []
input_images = inputs['context'].contiguous()
input_states = inputs['state'].contiguous()
grad_list.append(get_grad_vid(forward_model, input_images, input_states))
action = forward_model.policy_net(inputs['context'], inputs['state'])
grads = torch.cat(grad_list)
