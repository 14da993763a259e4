# label: safe
# why: the fix clones the image and state tensors before normalize_inputs, so its in-place -= and /= only touch get_grad_vid's private copies.
# source: https://github.com/Atcold/pytorch-PPUU/pull/53 (commit 8b3d4d64873a7e3cb4a15fe00c9db69a0488c9ec)
import torch
import torch.nn as nn

torch.manual_seed(0)


def normalize_inputs(images, states, stats, device="cpu"):
    images = images.clone().float().div_(255.0)
    states -= stats["s_mean"].view(1, 4).expand(states.size())
    states /= stats["s_std"].view(1, 4).expand(states.size())
    if images.dim() == 4:  # if processing single vehicle
        images = images.to(device).unsqueeze(0)
        states = states.to(device).unsqueeze(0)
    return images, states


class PolicyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(4 + 4, 2)
        self.stats = {"s_mean": torch.tensor([10.0, 5.0, 1.0, 0.5]), "s_std": torch.tensor([4.0, 2.0, 0.5, 0.25])}

    def forward(self, input_images, input_states, normalize_inputs_flag=True):
        if normalize_inputs_flag:
            input_images, input_states = normalize_inputs(input_images.clone(), input_states.clone(), self.stats)
        h = self.encoder(input_images[:, -1])
        return torch.tanh(self.fc(torch.cat([h, input_states[:, -1]], 1)))


class ForwardModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy_net = PolicyNet()
        self.stats = self.policy_net.stats


def proximity_cost(images, states, car_sizes, s_mean, s_std):
    speed = states[..., 2:3] * s_std[2] + s_mean[2]
    return (images[..., 1, :, :].mean((-1, -2)) * speed.squeeze(-1) * car_sizes[:, 0]).mean(-1)


def lane_cost(images, car_sizes):
    return images[..., 0, :, :].mean((-1, -2)).squeeze(-1) * car_sizes[:, 1]


def get_grad_vid(model, input_images, input_states, car_sizes, device="cpu"):
    input_images, input_states = input_images.clone(), input_states.clone()
    input_images, input_states = normalize_inputs(input_images, input_states, model.policy_net.stats, device=device)
    input_images.requires_grad = True
    input_states.requires_grad = True
    input_images.retain_grad()
    input_states.retain_grad()

    proximity = proximity_cost(input_images[:, -1:], input_states.data[:, -1:], car_sizes, model.stats["s_mean"], model.stats["s_std"])
    proximity_loss = torch.mean(proximity)
    lane_loss = torch.mean(lane_cost(input_images[:, -1:], car_sizes))
    loss = proximity_loss + 0.2 * lane_loss
    loss.backward()
    return input_images.grad[:, -1].abs().clamp(max=1.0)


forward_model = ForwardModel()
inputs = {
    "context": torch.randint(0, 255, (3, 3, 8, 8)).float(),
    "state": torch.tensor([[12.0, 6.0, 1.5, 0.4], [12.5, 6.1, 1.4, 0.5], [13.0, 6.3, 1.6, 0.6]]),
}
car_sizes = torch.tensor([[4.0, 2.0]])
grad_list = []
actions = []
for step in range(2):
    input_images = inputs["context"].contiguous()
    input_states = inputs["state"].contiguous()
    grad_list.append(get_grad_vid(forward_model, input_images, input_states, car_sizes))
    with torch.no_grad():
        a = forward_model.policy_net(input_images.unsqueeze(0), input_states.unsqueeze(0))
    actions.append(a)
grads = torch.cat(grad_list)
actions = torch.stack(actions)
final_states = inputs["state"]
