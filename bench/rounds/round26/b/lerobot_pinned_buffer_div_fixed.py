# label: safe
# why: the fix divides out of place, so each returned observation image is a fresh tensor and refilling the shared pinned buffer for the next frame leaves the queued images intact.
# source: https://github.com/huggingface/lerobot/commit/c87b7ed16e
from collections import deque

import torch
from torch import nn

torch.manual_seed(0)

_pinned_buffers: dict[str, torch.Tensor] = {}


def prepare_observation_for_inference(observation, device, task=None, robot_type=None):
    for name in observation:
        value = observation[name]

        if "image" in name:
            if not value.is_contiguous():
                value = value.contiguous()
            h, w, c = value.shape
            buf_key = f"{name}_{h}_{w}"
            if buf_key not in _pinned_buffers:
                use_pin = device.type == "cuda"
                buf = torch.empty(1, c, h, w, dtype=torch.float32)
                _pinned_buffers.update({buf_key: buf.pin_memory() if use_pin else buf})
            frame = value.permute(2, 0, 1).unsqueeze(0)
            pinned = _pinned_buffers[buf_key]
            pinned.copy_(frame)
            t = pinned.to(device, non_blocking=True)
            # Use out-of-place division to avoid corrupting the shared buffer
            observation[name] = t.div(255.0)
        else:
            observation[name] = value.unsqueeze(0).to(device, non_blocking=True)

    observation["task"] = task if task else ""
    observation["robot_type"] = robot_type if robot_type else ""
    return observation


class DiffusionPolicyStub(nn.Module):
    def __init__(self, n_obs_steps=2):
        super().__init__()
        self.n_obs_steps = n_obs_steps
        self.encoder = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.head = nn.Linear(4 * n_obs_steps + 2 * n_obs_steps, 2)
        self._queues = {
            "observation.image": deque(maxlen=n_obs_steps),
            "observation.state": deque(maxlen=n_obs_steps),
        }

    def populate_queues(self, batch):
        for key in self._queues:
            if len(self._queues[key]) != self._queues[key].maxlen:
                while len(self._queues[key]) != self._queues[key].maxlen:
                    self._queues[key].append(batch[key])
            else:
                self._queues[key].append(batch[key])

    @torch.no_grad()
    def select_action(self, batch):
        self.populate_queues(batch)
        images = torch.stack(list(self._queues["observation.image"]), dim=1)
        states = torch.stack(list(self._queues["observation.state"]), dim=1)
        feats = self.encoder(images.flatten(0, 1)).mean(dim=(-1, -2)).view(images.shape[0], -1)
        return self.head(torch.cat([feats, states.flatten(1)], dim=-1)), images


def main():
    device = torch.device("cpu")
    policy = DiffusionPolicyStub(n_obs_steps=2)
    actions, history = [], None
    for step in range(3):
        raw = {
            "observation.image": torch.randint(0, 256, (6, 5, 3), dtype=torch.uint8),
            "observation.state": torch.randn(2),
        }
        observation = prepare_observation_for_inference(raw, device)
        action, history = policy.select_action(observation)
        actions.append(action)
    return torch.cat(actions), history


actions, image_history = main()
