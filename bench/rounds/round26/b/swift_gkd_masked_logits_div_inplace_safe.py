# label: safe
# why: student_logits[mask] and torch.gather return fresh copies whose backward only needs the mask/index, so dividing them by the temperature in place leaves every saved tensor intact.
# source: https://github.com/modelscope/ms-swift/commit/25219c444f
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class MegatronGKDTrainer:
    def __init__(self, temperature=0.9):
        self.temperature = temperature

    def generalized_jsd_loss(self, student_logits, teacher_logits, labels, beta=0.5, chunk_size=4,
                             teacher_topk_logprobs=None, teacher_topk_indices=None):
        mask = labels != -100
        local_num_valid = mask.sum()
        num_valid = local_num_valid.float()
        if num_valid == 0:
            return (student_logits.sum() * 0).reshape(())

        if teacher_topk_logprobs is not None and teacher_topk_indices is not None:
            total_loss = self._jsd_topk(student_logits, teacher_topk_logprobs, teacher_topk_indices, mask, beta)
            return total_loss / num_valid

        student_logits_masked = student_logits[mask]
        teacher_logits_masked = teacher_logits[mask]
        del student_logits, teacher_logits
        student_logits_masked.div_(self.temperature)
        teacher_logits_masked.div_(self.temperature)

        local_num_valid_int = local_num_valid.item()
        total_loss = student_logits_masked.new_zeros(())
        beta_t = torch.tensor(beta, dtype=student_logits_masked.dtype)
        log_beta = torch.log(beta_t)
        log_1_minus_beta = torch.log1p(-beta_t)

        for start_idx in range(0, local_num_valid_int, chunk_size):
            end_idx = min(start_idx + chunk_size, local_num_valid_int)
            s_log_probs = F.log_softmax(student_logits_masked[start_idx:end_idx], dim=-1)
            t_log_probs = F.log_softmax(teacher_logits_masked[start_idx:end_idx], dim=-1)
            mixture_log_probs = torch.logsumexp(
                torch.stack([s_log_probs + log_1_minus_beta, t_log_probs + log_beta]), dim=0
            )
            kl_teacher = F.kl_div(mixture_log_probs, t_log_probs, reduction="none", log_target=True).sum(-1)
            kl_student = F.kl_div(mixture_log_probs, s_log_probs, reduction="none", log_target=True).sum(-1)
            jsd_chunk = beta_t * kl_teacher + (1 - beta_t) * kl_student
            total_loss = total_loss + jsd_chunk.sum()
        return total_loss / num_valid

    def _jsd_topk(self, student_logits, teacher_topk_logprobs, teacher_topk_indices, mask, beta):
        s_topk = torch.gather(student_logits, dim=-1, index=teacher_topk_indices)
        s_topk.div_(self.temperature)
        t_topk = teacher_topk_logprobs / self.temperature
        s_topk_masked = s_topk[mask]
        t_topk_masked = t_topk[mask]
        t_log_p = F.log_softmax(t_topk_masked, dim=-1)
        s_log_p = F.log_softmax(s_topk_masked, dim=-1)
        t_p = torch.exp(t_log_p)
        s_p = torch.exp(s_log_p)
        m_log_p = torch.log(beta * t_p + (1 - beta) * s_p + 1e-10)
        jsd = beta * (t_p * (t_log_p - m_log_p)).sum(-1) + (1 - beta) * (s_p * (s_log_p - m_log_p)).sum(-1)
        return jsd.sum()


def main():
    vocab, hidden = 11, 8
    lm_head = torch.nn.Linear(hidden, vocab)
    hidden_states = torch.randn(2, 6, hidden)
    student_logits = lm_head(hidden_states)
    teacher_logits = torch.randn(2, 6, vocab)
    labels = torch.randint(0, vocab, (2, 6))
    labels[:, :2] = -100
    trainer = MegatronGKDTrainer()
    loss = trainer.generalized_jsd_loss(student_logits, teacher_logits, labels)
    topk_vals, topk_idx = teacher_logits.log_softmax(-1).topk(4, dim=-1)
    loss_topk = trainer.generalized_jsd_loss(student_logits, None, labels, teacher_topk_logprobs=topk_vals,
                                             teacher_topk_indices=topk_idx)
    (loss + loss_topk).backward()
    return loss.detach(), loss_topk.detach(), lm_head.weight.grad


gkd_loss, gkd_topk_loss, lm_head_grad = main()
