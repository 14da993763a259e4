# label: hazard silent
# why: on skipped steps EasyCache's apply_cache_diff adds the cached residual into the caller's audio latent in place, and forward() then reuses that same (now shifted) tensor to reconstruct the audio velocity.
# source: https://github.com/Comfy-Org/ComfyUI/pull/15390
import torch
import torch.nn as nn

torch.manual_seed(0)


class EasyCacheHolder:
    def __init__(self, skip_steps):
        self.skip_steps = set(skip_steps)
        self.step = 0
        self.cache_diff = {}

    def should_skip(self):
        return self.step in self.skip_steps and "audio" in self.cache_diff

    def apply_cache_diff(self, x, key):
        x += self.cache_diff[key]  # <-- IPL004: mutates the caller's carried latent in place
        return x

    def update_cache_diff(self, output, x, key):
        self.cache_diff[key] = output - x


def easycache_wrapper(executor, holder, video, audio, sigma):
    if holder.should_skip():
        out_video = holder.apply_cache_diff(video, "video")
        out_audio = holder.apply_cache_diff(audio, "audio")
    else:
        out_video, out_audio = executor(video, audio, sigma)
        holder.update_cache_diff(out_video, video, "video")
        holder.update_cache_diff(out_audio, audio, "audio")
    holder.step += 1
    return out_video, out_audio


class AVModel(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.video_proj = nn.Linear(dim, dim)
        self.audio_proj = nn.Linear(dim, dim)
        self.cross = nn.Linear(dim, dim)

    def _forward(self, video, audio, sigma):
        v = self.video_proj(video) + self.cross(audio.mean(1, keepdim=True))
        a = self.audio_proj(audio) + self.cross(video.mean(1, keepdim=True))
        return video - sigma * v, audio - sigma * a

    def forward(self, video, audio, sigma, holder):
        out_video, out_audio = easycache_wrapper(self._forward, holder, video, audio, sigma)
        # velocity reconstruction reuses the carried audio tensor after the wrapper chain
        video_velocity = (video - out_video) / sigma
        audio_velocity = (audio - out_audio) / sigma
        return video_velocity, audio_velocity


model = AVModel()
holder = EasyCacheHolder(skip_steps=[2, 3])
video = torch.randn(1, 4, 6)
audio = torch.randn(1, 3, 6)
sigmas = torch.linspace(1.0, 0.2, 5)
audio_velocities = []
with torch.no_grad():
    for i in range(len(sigmas) - 1):
        sigma, sigma_next = sigmas[i], sigmas[i + 1]
        v_vel, a_vel = model(video, audio, sigma, holder)
        audio_velocities.append(a_vel)
        video = video - (sigma - sigma_next) * v_vel
        audio = audio - (sigma - sigma_next) * a_vel
final_video = video
final_audio = audio
all_audio_velocities = torch.stack(audio_velocities)
