package server

import (
	"sync"

	"idemlab/server/classroom"
)

func init() {
	mounts = append(mounts, mountClassroom)
	extraCauses = append(extraCauses, classroom.Causes...)
}

// classroomConfig is the classroom's configuration beyond Options; tests
// shrink its queues and deadlines.
var classroomConfig classroom.Config

// instructorPaths remembers, per Server, the instructor's link path, which
// InstructorPath hands to the command that prints it at start-up.
var instructorPaths sync.Map // *Server → string

// generatedSecrets remembers, per Server, the instructor secret the
// classroom made at this start, if it made one.
var generatedSecrets sync.Map // *Server → string

// mountClassroom serves the live classroom under /classroom: the projector,
// the phone page, rooms, QR codes and the rooms' websockets.
func mountClassroom(s *Server) (func(), error) {
	cfg := classroomConfig
	cfg.InstructorToken = s.opts.InstructorToken
	cfg.RotateToken = s.opts.RotateToken
	cfg.ListenAddr = s.opts.ListenAddr
	cfg.PublicURL = s.opts.PublicURL
	cfg.DB = s.opts.DB
	cfg.Logger = s.log
	cl, err := classroom.New(cfg)
	if err != nil {
		return nil, err
	}
	cl.Register(s.mux)
	instructorPaths.Store(s, cl.InstructorPath())
	generatedSecrets.Store(s, cl.GeneratedToken())
	return func() {
		cl.Close()
		instructorPaths.Delete(s)
		generatedSecrets.Delete(s)
	}, nil
}

// InstructorPath returns the path (with the secret token in its fragment)
// that opens the classroom's projector as the instructor. Print it once,
// at start-up; nothing else shows or logs the token.
func (s *Server) InstructorPath() string {
	p, _ := instructorPaths.Load(s)
	path, _ := p.(string)
	return path
}

// GeneratedInstructorSecret is the classroom's secret when this start made
// it (none was given, none was kept beside the database): print it once.
// Otherwise it is "".
func (s *Server) GeneratedInstructorSecret() string {
	v, _ := generatedSecrets.Load(s)
	secret, _ := v.(string)
	return secret
}
