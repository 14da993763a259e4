# label: safe
# why: loss += weight_vertex * losses.vertex adds into the fresh sum built on the previous line; addition saves nothing for backward and no other name holds that sum, so the in-place add is harmless.
# source: https://github.com/yunik1004/SAiD/issues/8
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class LossStepOutput:
    predict: torch.FloatTensor
    velocity: torch.FloatTensor
    vertex: Optional[torch.FloatTensor]


@dataclass
class Batch:
    waveform: torch.FloatTensor
    blendshape_coeffs: torch.FloatTensor
    blendshape_delta: Optional[torch.FloatTensor]


class Accelerator:
    """Single-process stand-in for accelerate.Accelerator."""

    device = torch.device("cpu")
    sync_gradients = True

    @contextmanager
    def accumulate(self, model):
        yield

    def backward(self, loss):
        loss.backward()


class SAID(nn.Module):
    def __init__(self, x_dim=4, audio_dim=6, hidden=8):
        super().__init__()
        self.audio_encoder = nn.Linear(1, audio_dim)
        self.denoiser = nn.Sequential(nn.Linear(x_dim + audio_dim + 1, hidden), nn.Tanh(), nn.Linear(hidden, x_dim))

    def forward(self, noisy_latents, timesteps, audio_embedding):
        t = timesteps.float().view(-1, 1, 1).expand(-1, noisy_latents.shape[1], 1) / 1000
        return self.denoiser(torch.cat([noisy_latents, audio_embedding, t], dim=-1))


def random_noise_loss(said_model, data, std, device, prediction_type="epsilon"):
    waveform = data.waveform.to(device)
    coeff_latents = data.blendshape_coeffs.to(device)
    audio_embedding = said_model.audio_encoder(waveform.unsqueeze(-1))
    noise = torch.randn_like(coeff_latents)
    random_timesteps = torch.randint(0, 1000, (coeff_latents.shape[0],))
    alpha = (1 - random_timesteps.float() / 1000).view(-1, 1, 1)
    noisy_latents = alpha.sqrt() * coeff_latents + (1 - alpha).sqrt() * noise
    velocity = alpha.sqrt() * noise - (1 - alpha).sqrt() * coeff_latents
    pred = said_model(noisy_latents, random_timesteps, audio_embedding)

    answer = None
    if prediction_type == "epsilon":
        answer = noise
    elif prediction_type == "sample":
        answer = coeff_latents
    elif prediction_type == "v_prediction":
        answer = velocity

    criterion_pred = nn.L1Loss()
    criterion_velocity = nn.L1Loss()
    criterion_vertex = nn.L1Loss()

    answer_reweight = answer / std.view(1, 1, -1).to(device)
    pred_reweight = pred / std.view(1, 1, -1).to(device)
    loss_pred = criterion_pred(pred_reweight, answer_reweight)

    answer_diff = answer_reweight[:, 1:, :] - answer_reweight[:, :-1, :]
    pred_diff = pred_reweight[:, 1:, :] - pred_reweight[:, :-1, :]
    loss_vel = criterion_velocity(pred_diff, answer_diff)

    loss_vertex = None
    if data.blendshape_delta is not None:
        blendshape_delta = data.blendshape_delta.to(device)
        b, k, v, i = blendshape_delta.shape
        blendshape_delta_norm = torch.norm(blendshape_delta, p=1, dim=[1, 2, 3]) / (k * v * i)
        blendshape_delta_normalized = torch.div(blendshape_delta, blendshape_delta_norm.view(-1, 1, 1, 1))
        be_answer = torch.bmm(answer, blendshape_delta_normalized.view(b, k, v * i))
        be_pred = torch.bmm(pred, blendshape_delta_normalized.view(b, k, v * i))
        loss_vertex = criterion_vertex(be_pred, be_answer)

    return LossStepOutput(predict=loss_pred, velocity=loss_vel, vertex=loss_vertex)


def train_epoch(said_model, train_dataloader, optimizer, accelerator, std, weight_vel, weight_vertex,
                prediction_type="epsilon"):
    device = accelerator.device
    said_model.train()
    train_total_losses = {"loss": 0, "loss_predict": 0, "loss_velocity": 0, "loss_vertex": 0}
    train_total_num = 0
    for data in train_dataloader:
        curr_batch_size = len(data.waveform)
        with accelerator.accumulate(said_model):
            losses = random_noise_loss(said_model, data, std, device, prediction_type)
            loss = losses.predict + weight_vel * losses.velocity
            if losses.vertex is not None:
                loss += weight_vertex * losses.vertex
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        train_total_losses["loss"] += loss.item() * curr_batch_size
        train_total_losses["loss_predict"] += losses.predict.item() * curr_batch_size
        train_total_losses["loss_velocity"] += losses.velocity.item() * curr_batch_size
        if losses.vertex is not None:
            train_total_losses["loss_vertex"] += losses.vertex.item() * curr_batch_size
        train_total_num += curr_batch_size
    return {k: v / train_total_num for k, v in train_total_losses.items()}, loss.detach()


said_model = SAID()
optimizer = torch.optim.AdamW(said_model.parameters(), lr=1e-3, weight_decay=1e-4)
train_dataloader = [
    Batch(torch.randn(2, 5), torch.randn(2, 5, 4), torch.randn(2, 4, 3, 3)) for _ in range(3)
]
coeffs_std = torch.rand(1, 4) + 0.5
avg_losses, last_loss = train_epoch(said_model, train_dataloader, optimizer, Accelerator(), coeffs_std, 1.0, 0.02)
